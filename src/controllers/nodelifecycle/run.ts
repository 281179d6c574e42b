/**
 * Runtime of the node lifecycle controller, keyed by node name: each reconcile folds the node's
 * latest heartbeats (Ready condition, kube-node-lease Lease) into what it observed, turns the
 * monitored conditions Unknown once the grace period passed without one, sets the not-ready /
 * unreachable NoSchedule taints the Ready condition calls for, marks its pods not Ready, evicts the pods of a NoExecute-tainted node
 * when their tolerations run out, and force-deletes the terminating pods of a fenced
 * (out-of-service) node. Time passing is what makes a node stale: each reconcile requeues itself
 * for the next deadline, and the monitor period re-checks every node.
 *
 * One more key, ZONE_PASS, is the cluster-wide pass over all nodes (kube's monitorNodeHealth tail
 * and doNoExecuteTaintingPass): zone states and disruption mode first, then the NoExecute taints
 * through each zone's rate-limited queue — in that order, so that a node whose going down puts
 * every zone in FullDisruption is never tainted NoExecute at all.
 */
import type { Node, Pod, Taint } from 'kubernetes-types/core/v1.js';
import { every, newController, newEventRecorder, objectOf, watch, type RestClient } from '../../client/index.js';
import { NODE_LEASE_NAMESPACE } from '../../kube/names.js';
import { nodeReadyCondition } from '../../kube/node.js';
import { isPodActive } from '../../kube/workloads.js';
import { realClock, type Clock } from '../../util/backoff.js';
import { ConflictError, NotFoundError } from '../../util/errors.js';
import { newLogger } from '../../util/log.js';
import { MetricsRegistry } from '../../util/metrics.js';
import { POD_NODE_INDEX, newControllerInformers, type ControllerInformers } from '../informers.js';
import {
  DEFAULT_NODE_MONITOR_GRACE_MS,
  DEFAULT_NODE_MONITOR_PERIOD_MS,
  evictionDecision,
  forceDeleteOnFencedNode,
  observeHealth,
  noScheduleTaints,
  podNotReadyConditions,
  staleAt,
  staleConditions,
  type NodeHealth,
} from './decide.js';
import { ZoneTaintQueue } from './taintqueue.js';
import {
  DEFAULT_EVICTION_LIMITS,
  computeZoneState,
  noExecuteStep,
  planDisruption,
  swappedNoExecuteTaints,
  withoutNoExecuteLifecycleTaints,
  zoneKey,
  zoneReadiness,
  type EvictionLimits,
  type ZoneState,
} from './zones.js';

const log = newLogger('nodelifecycle');

export interface NodeLifecycleOptions {
  readonly client: RestClient;
  readonly signal: AbortSignal;
  /** --node-monitor-grace-period: silence after which a node's conditions become Unknown. */
  readonly gracePeriodMs?: number;
  /** --node-monitor-period: how often every node is re-checked. */
  readonly monitorPeriodMs?: number;
  /** --node-eviction-rate, --secondary-node-eviction-rate, --large-cluster-size-threshold, --unhealthy-zone-threshold. */
  readonly evictionLimits?: EvictionLimits;
  readonly clock?: Clock;
  readonly informers?: ControllerInformers;
  readonly metrics?: MetricsRegistry;
}

/** The queue key of the cluster-wide zone pass (no node name starts with '/'). */
const ZONE_PASS = '/zones';
/** kube's NodeStatusUpdateRetry: attempts of one taint swap against conflicting writers. */
const TAINT_WRITE_ATTEMPTS = 5;
/** A queued node without a Ready condition is tried again this much later (kube's 50 ms). */
const NO_CONDITION_RETRY_MS = 50;

const revision = (n: Node): bigint => {
  const rv = n.metadata?.resourceVersion ?? '';
  return /^\d+$/.test(rv) ? BigInt(rv) : 0n;
};

/** Runs the node lifecycle controller until `signal` aborts. */
export async function runNodeLifecycleController(o: NodeLifecycleOptions): Promise<void> {
  const { client } = o;
  const clock = o.clock ?? realClock;
  const graceMs = o.gracePeriodMs ?? DEFAULT_NODE_MONITOR_GRACE_MS;
  const periodMs = o.monitorPeriodMs ?? DEFAULT_NODE_MONITOR_PERIOD_MS;
  const { nodes, nodeLeases: leases, pods } = o.informers ?? newControllerInformers(client);
  const nodeApi = client.resource('Node');
  const podApi = client.resource('Pod');
  const recorder = newEventRecorder({ client, component: 'node-controller' });
  const limits = o.evictionLimits ?? DEFAULT_EVICTION_LIMITS;
  const health = new Map<string, NodeHealth>();
  let zoneStates: ReadonlyMap<string, ZoneState> = new Map();
  /** Per zone, created when the zone is first seen and kept (kube's zoneNoExecuteTainter). */
  const taintQueues = new Map<string, ZoneTaintQueue>();
  // kube's node_collector metrics, by zone key.
  const metrics = o.metrics ?? new MetricsRegistry();
  const zoneHealth = metrics.gauge('node_collector_zone_health', 'Gauge measuring percentage of healthy nodes per zone.', ['zone']);
  const zoneSize = metrics.gauge('node_collector_zone_size', 'Gauge measuring number of registered Nodes per zones.', ['zone']);
  const unhealthyNodes = metrics.gauge('node_collector_unhealthy_nodes_in_zone', 'Gauge measuring number of not Ready Nodes per zones.', ['zone']);
  const evictionsTotal = metrics.counter('node_collector_evictions_total', 'Number of Node evictions that happened since current instance of NodeController started.', ['zone']);
  const queueOf = (zone: string, now: number): ZoneTaintQueue => {
    let q = taintQueues.get(zone);
    if (!q) {
      taintQueues.set(zone, (q = new ZoneTaintQueue(limits.nodeEvictionRate, now)));
      evictionsTotal.inc({ zone }, 0);
    }
    return q;
  };

  /** Writes the stale conditions; the node as written (or null when it changed under us: requeue). */
  const markUnknown = async (node: Node, now: number, h: NodeHealth): Promise<Node> => {
    const conditions = staleConditions(node, h, now, graceMs);
    if (!conditions) return node;
    log.info('node stopped posting status; conditions Unknown', { node: node.metadata?.name });
    recorder.event(node, 'Normal', 'NodeNotReady', `Node ${node.metadata?.name} status is now: NodeNotReady`);
    return nodeApi.updateStatus({ ...node, status: { ...node.status, conditions } });
  };

  const setTaints = async (node: Node): Promise<Node> => {
    const taints = noScheduleTaints(node);
    if (!taints) return node;
    log.info('node taints', { node: node.metadata?.name, taints: taints.map((t) => `${t.key}:${t.effect}`).join(',') });
    return nodeApi.update({ ...node, spec: { ...node.spec, taints } });
  };

  const settlePods = async (node: Node, now: number): Promise<number | undefined> => {
    let next: number | undefined;
    const taints = node.spec?.taints ?? [];
    for (const p of pods.byIndex(POD_NODE_INDEX, node.metadata?.name ?? '')) {
      const ns = p.metadata?.namespace ?? '';
      const name = p.metadata?.name ?? '';
      const uid = p.metadata?.uid;
      if (forceDeleteOnFencedNode(p, node)) {
        log.info('force-deleting a pod of an out-of-service node', { pod: `${ns}/${name}`, node: node.metadata?.name });
        await deletePod(p, { namespace: ns, gracePeriodSeconds: 0, preconditions: { uid } });
        continue;
      }
      const notReady = podNotReadyConditions(p, node, now);
      if (notReady) {
        recorder.event(p, 'Warning', 'NodeNotReady', 'Node is not ready');
        await writePod(() => podApi.updateStatus({ ...p, status: { ...p.status, conditions: notReady } }));
      }
      if (!isPodActive(p)) continue;
      const d = evictionDecision(p, taints, now);
      if (d.kind === 'evictAt') next = next === undefined ? d.atMs : Math.min(next, d.atMs);
      if (d.kind !== 'evictNow') continue;
      log.info('evicting a pod from a NoExecute-tainted node', { pod: `${ns}/${name}`, node: node.metadata?.name });
      recorder.event(p, 'Normal', 'TaintManagerEviction', `Marking for deletion Pod ${ns}/${name}`);
      await deletePod(p, { namespace: ns, preconditions: { uid } });
    }
    return next;
  };

  /** A pod write that may find the pod gone or changed: the next reconcile (its informer event) decides again. */
  const writePod = async (write: () => Promise<unknown>): Promise<void> => {
    try {
      await write();
    } catch (e) {
      if (!(e instanceof NotFoundError) && !(e instanceof ConflictError)) throw e;
    }
  };
  // The uid precondition: a pod of the same name created meanwhile is not ours to delete.
  const deletePod = (p: Pod, opts: { namespace: string; gracePeriodSeconds?: number; preconditions: { uid?: string } }): Promise<void> =>
    writePod(() => podApi.delete(p.metadata?.name ?? '', opts));

  const reconcile = async (name: string): Promise<{ requeueAfterMs?: number }> => {
    let node = nodes.lister.get(name);
    if (!node) {
      health.delete(name);
      return {};
    }
    const now = clock.now();
    const h = observeHealth(health.get(name), node, leases.lister.get(NODE_LEASE_NAMESPACE, name), now);
    health.set(name, h);
    node = await markUnknown(node, now, h);
    node = await setTaints(node);
    const evictAt = await settlePods(node, now);
    const deadlines = [staleAt(h, now, graceMs), evictAt].filter((x): x is number => x !== undefined);
    return deadlines.length ? { requeueAfterMs: Math.max(1, Math.min(...deadlines) - now) } : {};
  };

  /**
   * Nodes as this pass last wrote them, until the informer catches up: a node just tainted must not
   * look untainted to the next pass (it would be queued afresh and spend another token).
   */
  const written = new Map<string, Node>();
  const latest = (n: Node): Node => {
    const name = n.metadata?.name ?? '';
    const w = written.get(name);
    if (w && revision(w) > revision(n)) return w;
    written.delete(name);
    return n;
  };

  /**
   * SwapNodeControllerTaint: writes `taintsOf(node)` (null: nothing to write), re-reading the node
   * on a conflict; false when the node is gone or the write kept conflicting (a later pass retries).
   */
  const writeNodeTaints = async (node: Node, taintsOf: (n: Node) => Taint[] | null): Promise<boolean> => {
    let current = node;
    for (let attempt = 1; ; attempt++) {
      const taints = taintsOf(current);
      if (!taints) return true;
      try {
        written.set(current.metadata?.name ?? '', await nodeApi.update({ ...current, spec: { ...current.spec, taints } }));
        log.info('node NoExecute taints', { node: current.metadata?.name, taints: taints.map((t) => `${t.key}:${t.effect}`).join(',') });
        return true;
      } catch (e) {
        if (e instanceof NotFoundError) return false;
        if (!(e instanceof ConflictError) || attempt >= TAINT_WRITE_ATTEMPTS) throw e;
      }
      current = await nodeApi.get(current.metadata?.name ?? '');
    }
  };

  /** markNodeAsReachable: no NoExecute lifecycle taint, and out of its zone's queue. */
  const markReachable = async (node: Node, now: number): Promise<void> => {
    queueOf(zoneKey(node), now).remove(node.metadata?.name ?? '');
    await writeNodeTaints(node, withoutNoExecuteLifecycleTaints);
  };

  const zonePass = async (): Promise<{ requeueAfterMs?: number }> => {
    const now = clock.now();
    const all = nodes.lister.list().map(latest);
    for (const name of written.keys()) if (!nodes.lister.get(name)) written.delete(name);
    for (const n of all) queueOf(zoneKey(n), now);
    const readiness = zoneReadiness(all);
    for (const [zone, statuses] of readiness) {
      const { unhealthy } = computeZoneState(statuses, limits.unhealthyZoneThreshold);
      zoneSize.set({ zone }, statuses.length);
      unhealthyNodes.set({ zone }, unhealthy);
      zoneHealth.set({ zone }, (100 * (statuses.length - unhealthy)) / statuses.length);
    }
    for (const zone of zoneStates.keys()) {
      if (readiness.has(zone)) continue;
      zoneSize.set({ zone }, 0);
      unhealthyNodes.set({ zone }, 0);
      zoneHealth.set({ zone }, 100);
    }
    const plan = planDisruption(zoneStates, readiness, limits);
    for (const [zone, qps] of plan.rates) queueOf(zone, now).swapLimiter(qps, now);
    for (const [zone, state] of plan.states) if (zoneStates.get(zone) !== state) log.info('zone state', { zone: zone.replace(':\0:', ':'), state });
    zoneStates = plan.states;
    if (plan.mode === 'enter') {
      // kube logs this (no Event): every node not Ready looks like this controller being cut off.
      log.info('all nodes are not Ready: entering disruption mode; no NoExecute taints, and those there are lifted');
      for (const n of all) await markReachable(n, now);
    } else if (plan.mode === 'leave') {
      log.info('some nodes are Ready: leaving disruption mode; every node gets a full grace period again');
      for (const n of all) {
        const name = n.metadata?.name ?? '';
        const h = health.get(name);
        if (h) health.set(name, { ...h, probeMs: now });
      }
    }
    // processTaintBaseEviction, per node.
    for (const n of plan.mode === 'enter' ? [] : all) {
      const name = n.metadata?.name ?? '';
      const step = noExecuteStep(n);
      if (step.kind === 'swapNow') await writeNodeTaints(n, (x) => swappedNoExecuteTaints(x, now));
      else if (step.kind === 'reachable') await markReachable(n, now);
      else if (step.kind === 'queue') {
        const q = queueOf(zoneKey(n), now);
        if (step.requeue) q.remove(name);
        q.add(name, now);
      }
    }
    // doNoExecuteTaintingPass: each zone's queue as fast as its limiter allows.
    for (const q of taintQueues.values()) {
      for (const name of q.take(now)) {
        const cached = nodes.lister.get(name);
        const n = cached && latest(cached);
        if (!n) continue;
        if (!nodeReadyCondition(n)) {
          q.retry(name, now + NO_CONDITION_RETRY_MS);
          continue;
        }
        if (await writeNodeTaints(n, (x) => swappedNoExecuteTaints(x, now))) evictionsTotal.inc({ zone: zoneKey(n) });
        else q.retry(name, now + 1);
      }
    }
    const next = [...taintQueues.values()].map((q) => q.nextAt(clock.now())).filter((x): x is number => x !== undefined);
    return next.length ? { requeueAfterMs: Math.max(1, Math.min(...next) - clock.now()) } : {};
  };

  const controller = newController<string>({
    name: 'nodelifecycle',
    workers: 4,
    metrics: o.metrics,
    clock: o.clock,
    log,
    sources: [
      watch(nodes, (q) => {
        const onNode = (name: string | undefined): void => {
          q.add(name ?? '');
          q.add(ZONE_PASS);
        };
        return { onAdd: (n) => onNode(n.metadata?.name), onUpdate: (_, n) => onNode(n.metadata?.name), onDelete: (x) => onNode(objectOf(x).metadata?.name) };
      }),
      watch(leases, (q) => ({
        onAdd: (l) => q.add(l.metadata?.name ?? ''),
        onUpdate: (_, l) => q.add(l.metadata?.name ?? ''),
        onDelete: (x) => q.add(objectOf(x).metadata?.name ?? ''),
      })),
      // A pod landing on (or being deleted from) a tainted node needs its eviction decided.
      watch(pods, (q) => {
        const onPod = (p: Pod): void => {
          const n = p.spec?.nodeName ? nodes.lister.get(p.spec.nodeName) : undefined;
          if (n && (n.spec?.taints ?? []).length > 0) q.add(p.spec?.nodeName ?? '');
        };
        return { onAdd: onPod, onUpdate: (_, p) => onPod(p), onDelete: () => undefined };
      }),
      every(
        periodMs,
        (q) => {
          nodes.lister.list().forEach((n) => q.add(n.metadata?.name ?? ''));
          q.add(ZONE_PASS);
        },
        clock,
      ),
    ],
    reconcile: async (key) => {
      if (key === ZONE_PASS) return zonePass();
      if (key) return reconcile(key);
    },
  });
  try {
    await controller.run(o.signal);
  } finally {
    await recorder.close();
  }
}
