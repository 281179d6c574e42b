/**
 * The node lifecycle controller's cluster-wide pass (kube's handleDisruption, the per-node
 * processTaintBaseEviction, and doNoExecuteTaintingPass), run under one queue key: zone states and
 * disruption mode first, then each node's NoExecute taint through its zone's rate-limited queue.
 * In that order, so that a node whose going down puts every zone in FullDisruption is never
 * tainted NoExecute at all (kube's separate loops can taint it for a moment before lifting it).
 */
import type { Node, ObjectReference, Taint } from 'kubernetes-types/core/v1.js';
import type { EventRecorder, Lister, ResourceClient } from '../../client/index.js';
import { retryOnConflict } from '../../client/retry.js';
import { nodeReadyCondition } from '../../kube/node.js';
import type { Clock } from '../../util/backoff.js';
import { ConflictError, NotFoundError } from '../../util/errors.js';
import { newLogger } from '../../util/log.js';
import type { MetricsRegistry } from '../../util/metrics.js';
import { ZoneTaintQueue } from './taintqueue.js';
import {
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
import { nameOf } from '../../kube/meta.js';

const log = newLogger('nodelifecycle');

/** The queue key of the zone pass (no node name starts with '/'). */
export const ZONE_PASS = '/zones';
/** kube's NodeStatusUpdateRetry: attempts of one taint swap against conflicting writers. */
const TAINT_WRITE_ATTEMPTS = 5;
/** A queued node without a Ready condition is tried again this much later (kube's 50 ms). */
const NO_CONDITION_RETRY_MS = 50;

export interface ZonePassOptions {
  readonly nodes: Lister<Node>;
  readonly nodeApi: ResourceClient<Node>;
  readonly clock: Clock;
  readonly limits: EvictionLimits;
  readonly metrics: MetricsRegistry;
  readonly recorder: Pick<EventRecorder, 'event'>;
  /** Leaving disruption mode: every node's grace period starts again now (kube resets its probe timestamps). */
  readonly onLeaveDisruption: (nowMs: number) => void;
}

const revision = (n: Node): bigint => {
  const rv = n.metadata?.resourceVersion ?? '';
  return /^\d+$/.test(rv) ? BigInt(rv) : 0n;
};
/** RecordNodeEvent's reference: the Node by name and uid. */
const nodeRef = (n: Node): ObjectReference => ({
  apiVersion: 'v1',
  kind: 'Node',
  name: nameOf(n),
  uid: n.metadata?.uid,
});

/** The node collector's per-zone metrics, under kube's names. */
function zoneMetrics(metrics: ZonePassOptions['metrics']) {
  const zoneHealth = metrics.gauge(
    'node_collector_zone_health',
    'Gauge measuring percentage of healthy nodes per zone.',
    ['zone'],
  );
  const zoneSize = metrics.gauge('node_collector_zone_size', 'Gauge measuring number of registered Nodes per zones.', [
    'zone',
  ]);
  const unhealthyNodes = metrics.gauge(
    'node_collector_unhealthy_nodes_in_zone',
    'Gauge measuring number of not Ready Nodes per zones.',
    ['zone'],
  );
  const evictionsTotal = metrics.counter(
    'node_collector_evictions_total',
    'Number of Node evictions that happened since current instance of NodeController started.',
    ['zone'],
  );
  return { zoneHealth, zoneSize, unhealthyNodes, evictionsTotal };
}

/** The zone pass; each call is one pass, returning when to run again for the next token due. */
export function newZonePass(o: ZonePassOptions): () => Promise<{ requeueAfterMs?: number }> {
  const { nodes, nodeApi, clock, limits } = o;
  let zoneStates: ReadonlyMap<string, ZoneState> = new Map();
  /** Per zone, created when the zone is first seen and kept (kube's zoneNoExecuteTainter). */
  const taintQueues = new Map<string, ZoneTaintQueue>();
  const { zoneHealth, zoneSize, unhealthyNodes, evictionsTotal } = zoneMetrics(o.metrics);

  const queueOf = (zone: string, now: number): ZoneTaintQueue => {
    let q = taintQueues.get(zone);
    if (!q) {
      taintQueues.set(zone, (q = new ZoneTaintQueue(limits.nodeEvictionRate, now)));
      evictionsTotal.inc({ zone }, 0);
    }
    return q;
  };

  /**
   * Nodes as this pass last wrote them, until the informer catches up: a node just tainted must not
   * look untainted to the next pass (it would be queued afresh and spend another token).
   */
  const written = new Map<string, Node>();
  const latest = (n: Node): Node => {
    const w = written.get(nameOf(n));
    if (w && revision(w) > revision(n)) return w;
    written.delete(nameOf(n));
    return n;
  };

  /**
   * SwapNodeControllerTaint: writes `taintsOf(node)` (null: nothing to write), re-reading the node
   * after a conflict (retryOnConflict, kube's NodeStatusUpdateRetry attempts). 'gone' when the node
   * was deleted meanwhile.
   */
  const writeNodeTaints = async (
    node: Node,
    taintsOf: (n: Node) => Taint[] | null,
  ): Promise<'written' | 'unchanged' | 'gone'> => {
    let current = node;
    const write = async (): Promise<'written' | 'unchanged'> => {
      const taints = taintsOf(current);
      if (!taints) return 'unchanged';
      try {
        written.set(nameOf(current), await nodeApi.update({ ...current, spec: { ...current.spec, taints } }));
      } catch (e) {
        if (e instanceof ConflictError) current = await nodeApi.get(nameOf(current));
        throw e;
      }
      log.info('node NoExecute taints', {
        node: nameOf(current),
        taints: taints.map((t) => `${t.key}:${t.effect}`).join(','),
      });
      return 'written';
    };
    try {
      return await retryOnConflict(write, { attempts: TAINT_WRITE_ATTEMPTS });
    } catch (e) {
      if (e instanceof NotFoundError) return 'gone';
      throw e;
    }
  };

  /** markNodeAsReachable: no NoExecute lifecycle taint, and out of its zone's queue. */
  const markReachable = async (node: Node, now: number): Promise<void> => {
    queueOf(zoneKey(node), now).remove(nameOf(node));
    await writeNodeTaints(node, withoutNoExecuteLifecycleTaints);
  };

  const recordZones = (readiness: ReadonlyMap<string, readonly (string | undefined)[]>): void => {
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
  };

  /**
   * classifyNodes: a node seen for the first time (every node, after a restart) gets RegisteredNode
   * and its NoExecute lifecycle taints lifted — re-added through its zone's queue if still due; a
   * node gone gets RemovingNode.
   */
  const known = new Map<string, Node>();
  const classifyNodes = async (all: readonly Node[], now: number): Promise<void> => {
    for (const n of all) {
      const name = nameOf(n);
      const fresh = !known.has(name);
      known.set(name, n);
      if (!fresh) continue;
      o.recorder.event(nodeRef(n), 'Normal', 'RegisteredNode', `Registered Node ${name} in Controller`);
      await markReachable(n, now);
    }
    const present = new Set(all.map(nameOf));
    for (const [name, n] of known) {
      if (present.has(name)) continue;
      o.recorder.event(nodeRef(n), 'Normal', 'RemovingNode', `Removing Node ${name} from Controller`);
      known.delete(name);
    }
  };

  /** handleDisruption: new zone states and rates; entering disruption mode lifts every NoExecute lifecycle taint. */
  const handleDisruption = async (all: readonly Node[], now: number): Promise<'enter' | 'leave' | undefined> => {
    const readiness = zoneReadiness(all);
    recordZones(readiness);
    const plan = planDisruption(zoneStates, readiness, limits);
    for (const [zone, qps] of plan.rates) queueOf(zone, now).swapLimiter(qps, now);
    for (const [zone, state] of plan.states)
      if (zoneStates.get(zone) !== state) log.info('zone state', { zone: zone.replace(':\0:', ':'), state });
    zoneStates = plan.states;
    if (plan.mode === 'enter') {
      // kube logs this (no Event): every node not Ready looks like this controller being cut off.
      log.info('all nodes are not Ready: entering disruption mode; no NoExecute taints, and those there are lifted');
      for (const n of all) await markReachable(n, now);
    } else if (plan.mode === 'leave') {
      log.info('some nodes are Ready: leaving disruption mode; every node gets a full grace period again');
      o.onLeaveDisruption(now);
    }
    return plan.mode;
  };

  /** processTaintBaseEviction for each node. */
  const queueNodes = async (all: readonly Node[], now: number): Promise<void> => {
    for (const n of all) {
      const step = noExecuteStep(n);
      if (step.kind === 'swapNow') await writeNodeTaints(n, (x) => swappedNoExecuteTaints(x, now));
      else if (step.kind === 'reachable') await markReachable(n, now);
      else if (step.kind === 'queue') {
        const q = queueOf(zoneKey(n), now);
        if (step.requeue) q.remove(nameOf(n));
        q.add(nameOf(n), now);
      }
    }
  };

  /** doNoExecuteTaintingPass: each zone's queue as fast as its limiter allows. */
  const taintDue = async (now: number): Promise<void> => {
    for (const q of taintQueues.values()) {
      for (const name of q.take(now)) {
        const cached = nodes.get(name);
        if (!cached) continue;
        const n = latest(cached);
        if (!nodeReadyCondition(n)) {
          q.retry(name, now + NO_CONDITION_RETRY_MS);
          continue;
        }
        const result = await writeNodeTaints(n, (x) => swappedNoExecuteTaints(x, now));
        if (result === 'written') evictionsTotal.inc({ zone: zoneKey(n) });
      }
    }
  };

  return async () => {
    const now = clock.now();
    for (const name of written.keys()) if (!nodes.get(name)) written.delete(name);
    for (const n of nodes.list()) queueOf(zoneKey(n), now);
    await classifyNodes(nodes.list().map(latest), now);
    const all = nodes.list().map(latest);
    // Entering disruption mode: every node was just made reachable; they are queued from the next pass on (at rate 0).
    if ((await handleDisruption(all, now)) !== 'enter') await queueNodes(all, now);
    await taintDue(now);
    const at = clock.now();
    const next = [...taintQueues.values()].map((q) => q.nextAt(at)).filter((x): x is number => x !== undefined);
    return next.length ? { requeueAfterMs: Math.max(1, Math.min(...next) - at) } : {};
  };
}
