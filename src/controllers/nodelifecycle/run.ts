/**
 * Runtime of the node lifecycle controller, keyed by node name: each reconcile folds the node's
 * latest heartbeats (Ready condition, kube-node-lease Lease) into what it observed, turns the
 * monitored conditions Unknown once the grace period passed without one, sets the not-ready /
 * unreachable NoSchedule taints the Ready condition calls for, marks its pods not Ready, evicts the pods of a NoExecute-tainted node
 * when their tolerations run out, and force-deletes the terminating pods of a fenced
 * (out-of-service) node. Time passing is what makes a node stale: each reconcile requeues itself
 * for the next deadline, and the monitor period re-checks every node.
 *
 * One more key, ZONE_PASS, runs the cluster-wide pass (zonepass.ts): zone states, disruption mode
 * and the NoExecute taints through each zone's rate-limited queue. Any node event queues it.
 */
import type { Node, Pod } from 'kubernetes-types/core/v1.js';
import {
  every,
  newController,
  newEventRecorder,
  objectOf,
  watch,
  type RestClient,
  type ReconcileResult,
} from '../../client/index.js';
import { NODE_LEASE_NAMESPACE } from '../../kube/names.js';
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
import { DEFAULT_EVICTION_LIMITS, type EvictionLimits } from './zones.js';
import { ZONE_PASS, newZonePass } from './zonepass.js';

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
  const health = new Map<string, NodeHealth>();

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
  const deletePod = (
    p: Pod,
    opts: { namespace: string; gracePeriodSeconds?: number; preconditions: { uid?: string } },
  ): Promise<void> => writePod(() => podApi.delete(p.metadata?.name ?? '', opts));

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

  const zonePass = newZonePass({
    nodes: nodes.lister,
    nodeApi,
    clock,
    limits: o.evictionLimits ?? DEFAULT_EVICTION_LIMITS,
    metrics: o.metrics ?? new MetricsRegistry(),
    recorder,
    onLeaveDisruption: (now) => {
      for (const [name, h] of health) health.set(name, { ...h, probeMs: now });
    },
  });

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
        return {
          onAdd: (n) => onNode(n.metadata?.name),
          onUpdate: (_, n) => onNode(n.metadata?.name),
          onDelete: (x) => onNode(objectOf(x).metadata?.name),
        };
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
    reconcile: async (key): Promise<ReconcileResult | void> => {
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
