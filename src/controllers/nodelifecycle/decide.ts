/**
 * The node lifecycle controller's decisions, pure (kube-controller-manager v1.30
 * pkg/controller/nodelifecycle and pkg/controller/tainteviction, plus PodGC's out-of-service pass):
 * when a node's heartbeats stopped long enough for its conditions to become Unknown, which
 * NoSchedule taints the conditions call for (the NoExecute ones: zones.ts), when a pod on a NoExecute-tainted
 * node is evicted, and which terminating pods of a fenced node are force-deleted.
 */
import type { Node, NodeCondition, Pod, PodCondition, Taint } from 'kubernetes-types/core/v1.js';
import type { Lease } from 'kubernetes-types/coordination/v1.js';
import {
  TAINT_DISK_PRESSURE,
  TAINT_MEMORY_PRESSURE,
  TAINT_NETWORK_UNAVAILABLE,
  TAINT_NOT_READY,
  TAINT_PID_PRESSURE,
  TAINT_UNREACHABLE,
  TAINT_UNSCHEDULABLE,
} from '../../kube/names.js';
import { nodeReadyCondition, nodeReadyStatus, tolerates } from '../../kube/node.js';
import { hasOutOfServiceTaint } from '../attachdetach/nodehealth.js';
import { metaTime } from '../../util/metatime.js';

/** kube-controller-manager's defaults: --node-monitor-grace-period 40s, --node-monitor-period 5s. */
export const DEFAULT_NODE_MONITOR_GRACE_MS = 40_000;
export const DEFAULT_NODE_MONITOR_PERIOD_MS = 5_000;

/** The conditions the node controller turns Unknown when the kubelet goes silent (nodelifecycle's list). */
const MONITORED_CONDITIONS = ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure'] as const;

/**
 * What the controller last observed of a node's heartbeats. `probeMs` is the controller's own
 * clock when a heartbeat last changed (kube's probeTimestamp): the node's timestamps are compared
 * only with themselves, so a node clock that is off does not make it look alive or dead.
 */
export interface NodeHealth {
  readonly heartbeat?: string;
  readonly leaseRenew?: string;
  readonly probeMs: number;
}

/** Folds one observation into the node's health record (kube's tryUpdateNodeHealth bookkeeping). */
export function observeHealth(
  prev: NodeHealth | undefined,
  node: Node,
  lease: Lease | undefined,
  nowMs: number,
): NodeHealth {
  const heartbeat = nodeReadyCondition(node)?.lastHeartbeatTime;
  const leaseRenew = lease?.spec?.renewTime ?? undefined;
  if (!prev) return { heartbeat, leaseRenew, probeMs: nowMs };
  if (prev.heartbeat === heartbeat && prev.leaseRenew === leaseRenew) return prev;
  return { heartbeat, leaseRenew, probeMs: nowMs };
}

/**
 * The conditions to write once `graceMs` passed since the last heartbeat (null: nothing to write).
 * Each monitored condition that is not Unknown yet becomes Unknown with kube's reasons; a node that
 * never posted one gets it as "never updated".
 */
export function staleConditions(
  node: Node,
  health: NodeHealth,
  nowMs: number,
  graceMs: number,
): NodeCondition[] | null {
  if (nowMs < health.probeMs + graceMs) return null;
  const now = metaTime(nowMs);
  const current = node.status?.conditions ?? [];
  let changed = false;
  const out = current.map((c) => {
    if (!(MONITORED_CONDITIONS as readonly string[]).includes(c.type) || c.status === 'Unknown') return c;
    changed = true;
    return {
      ...c,
      status: 'Unknown',
      reason: 'NodeStatusUnknown',
      message: 'Kubelet stopped posting node status.',
      lastTransitionTime: now,
    };
  });
  for (const type of MONITORED_CONDITIONS) {
    if (current.some((c) => c.type === type)) continue;
    changed = true;
    out.push({
      type,
      status: 'Unknown',
      reason: 'NodeStatusNeverUpdated',
      message: 'Kubelet never posted node status.',
      lastHeartbeatTime: now,
      lastTransitionTime: now,
    });
  }
  return changed ? out : null;
}

/** The moment the node's heartbeats run out (ms), for a requeue; undefined once they have. */
export function staleAt(health: NodeHealth, nowMs: number, graceMs: number): number | undefined {
  const at = health.probeMs + graceMs;
  return at > nowMs ? at : undefined;
}

/** nodeConditionToTaintKeyStatusMap: the NoSchedule taint each condition status calls for. */
const CONDITION_TAINTS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  Ready: { False: TAINT_NOT_READY, Unknown: TAINT_UNREACHABLE },
  MemoryPressure: { True: TAINT_MEMORY_PRESSURE },
  DiskPressure: { True: TAINT_DISK_PRESSURE },
  NetworkUnavailable: { True: TAINT_NETWORK_UNAVAILABLE },
  PIDPressure: { True: TAINT_PID_PRESSURE },
};
const CONDITION_TAINT_KEYS = new Set([
  ...Object.values(CONDITION_TAINTS).flatMap((m) => Object.values(m)),
  TAINT_UNSCHEDULABLE,
]);
const READY_TAINT_KEYS: ReadonlySet<string> = new Set([TAINT_NOT_READY, TAINT_UNREACHABLE]);

/**
 * doNoScheduleTaintingPass (null: unchanged): the NoSchedule taints the node's conditions call for
 * (Ready False → not-ready, Unknown → unreachable; MemoryPressure, DiskPressure, PIDPressure,
 * NetworkUnavailable True → theirs) and `spec.unschedulable` → unschedulable; such taints no longer
 * called for go. Not rate-limited and not paused by zone disruption: keeping new pods off a node is
 * always safe. (The NoExecute taints, which evict, go through the zones' rate limiters: zones.ts.)
 * Other taints are kept as they are.
 */
export function noScheduleTaints(node: Node): Taint[] | null {
  const want = new Set<string>();
  for (const c of node.status?.conditions ?? []) {
    const key = CONDITION_TAINTS[c.type]?.[c.status];
    if (key) want.add(key);
  }
  if (node.spec?.unschedulable) want.add(TAINT_UNSCHEDULABLE);
  // No Ready condition yet: the node has not reported; it becomes Unknown (and tainted) after the grace period.
  const readyUnknownYet = !nodeReadyCondition(node);
  const managed = (t: Taint): boolean =>
    t.effect === 'NoSchedule' && CONDITION_TAINT_KEYS.has(t.key) && !(readyUnknownYet && READY_TAINT_KEYS.has(t.key));
  const current = node.spec?.taints ?? [];
  const kept = current.filter((t) => !managed(t) || want.has(t.key));
  const added: Taint[] = [...want]
    .filter((k) => !kept.some((t) => managed(t) && t.key === k))
    .map((key) => ({ key, effect: 'NoSchedule' }));
  if (added.length === 0 && kept.length === current.length) return null;
  return [...kept, ...added];
}

export type EvictionDecision =
  { readonly kind: 'keep' } | { readonly kind: 'evictNow' } | { readonly kind: 'evictAt'; readonly atMs: number };

/**
 * tainteviction's rule for one pod on a node: a NoExecute taint the pod does not tolerate evicts it
 * now; tolerated ones with tolerationSeconds evict it that long after the taint was added (the
 * smallest such time wins); tolerated without a limit, never. Counting from the taint's timeAdded
 * (not from when this controller saw it) keeps the deadline across controller restarts.
 */
export function evictionDecision(pod: Pod, taints: readonly Taint[], nowMs: number): EvictionDecision {
  const noExecute = taints.filter((t) => t.effect === 'NoExecute');
  if (noExecute.length === 0) return { kind: 'keep' };
  const tolerations = pod.spec?.tolerations ?? [];
  let at: number | undefined;
  for (const taint of noExecute) {
    const used = tolerations.filter((t) => tolerates(t, taint));
    if (used.length === 0) return { kind: 'evictNow' };
    // Several tolerations for one taint: the pod stays as long as the most lenient allows.
    if (used.some((t) => t.tolerationSeconds === undefined || t.tolerationSeconds === null)) continue;
    const seconds = Math.max(...used.map((t) => Math.max(0, t.tolerationSeconds ?? 0)));
    const added = taint.timeAdded ? Date.parse(taint.timeAdded) : NaN;
    const from = Number.isNaN(added) ? nowMs : added;
    const due = from + seconds * 1000;
    at = at === undefined ? due : Math.min(at, due);
  }
  if (at === undefined) return { kind: 'keep' };
  return at <= nowMs ? { kind: 'evictNow' } : { kind: 'evictAt', atMs: at };
}

/**
 * PodGC's gcTerminating (non-graceful node shutdown, kube ≥1.28): a pod already being deleted on a
 * node that is not Ready and carries the out-of-service taint is force-deleted — its kubelet will
 * never confirm, and the taint is the operator's statement that the node is shut down.
 */
export function forceDeleteOnFencedNode(pod: Pod, node: Node): boolean {
  return (
    pod.metadata?.deletionTimestamp !== undefined && nodeReadyStatus(node) !== 'True' && hasOutOfServiceTaint(node)
  );
}

/**
 * nodeutil.MarkPodsNotReady: a pod on a node whose Ready condition is not True has its own Ready
 * condition set False (the node cannot vouch for it any more); null when there is nothing to change
 * (no Ready condition, already False, or the node is Ready or has never reported).
 */
export function podNotReadyConditions(pod: Pod, node: Node, nowMs: number): PodCondition[] | null {
  const nodeReady = nodeReadyCondition(node);
  if (!nodeReady || nodeReady.status === 'True') return null;
  const conditions = pod.status?.conditions ?? [];
  const ready = conditions.find((c) => c.type === 'Ready');
  if (!ready || ready.status === 'False') return null;
  return conditions.map((c) =>
    c.type === 'Ready' ? { ...c, status: 'False', lastTransitionTime: metaTime(nowMs) } : c,
  );
}
