/**
 * Pod and owner rules shared by the workload controllers (ReplicaSet, Deployment, endpoints):
 * controller references, active/ready/available pods, and kube's ActivePodsWithRanks order of
 * which pods to delete first. Pure; kube's pkg/controller/controller_utils.go and podutil. Also the
 * labels, finalizers and condition vocabulary of the StatefulSet and Job controllers.
 */
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { OwnerReference } from 'kubernetes-types/meta/v1.js';

interface Owned {
  readonly metadata?: { readonly ownerReferences?: readonly OwnerReference[] | undefined } | undefined;
}

/** metav1.GetControllerOf: the owner reference with controller=true. */
export function controllerRefOf(o: Owned): OwnerReference | undefined {
  return (o.metadata?.ownerReferences ?? []).find((r) => r.controller === true);
}

/** The controller reference a workload puts on what it creates (blockOwnerDeletion for foreground deletion). */
export function newControllerRef(
  owner: { metadata?: { name?: string; uid?: string } },
  apiVersion: string,
  kind: string,
): OwnerReference {
  return {
    apiVersion,
    kind,
    name: owner.metadata?.name ?? '',
    uid: owner.metadata?.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** controller.IsPodActive: not finished and not being deleted. */
export function isPodActive(p: Pod): boolean {
  const phase = p.status?.phase;
  return phase !== 'Succeeded' && phase !== 'Failed' && !p.metadata?.deletionTimestamp;
}

function readyCondition(p: Pod): { status?: string; lastTransitionTime?: string } | undefined {
  return (p.status?.conditions ?? []).find((c) => c.type === 'Ready');
}

/** podutil.IsPodReady. */
export function isPodReady(p: Pod): boolean {
  return readyCondition(p)?.status === 'True';
}

/** podutil.IsPodAvailable: ready for at least minReadySeconds at `nowMs`. */
export function isPodAvailable(p: Pod, minReadySeconds: number, nowMs: number): boolean {
  if (!isPodReady(p)) return false;
  if (minReadySeconds <= 0) return true;
  const since = Date.parse(readyCondition(p)?.lastTransitionTime ?? '');
  return !Number.isNaN(since) && since + minReadySeconds * 1000 <= nowMs;
}

/** Milliseconds until a ready pod becomes available, or undefined when it is not ready or already is. */
export function msUntilAvailable(p: Pod, minReadySeconds: number, nowMs: number): number | undefined {
  if (!isPodReady(p) || minReadySeconds <= 0) return undefined;
  const since = Date.parse(readyCondition(p)?.lastTransitionTime ?? '');
  if (Number.isNaN(since)) return undefined;
  const left = since + minReadySeconds * 1000 - nowMs;
  return left > 0 ? left : undefined;
}

const PHASE_RANK: Readonly<Record<string, number>> = { Pending: 0, Unknown: 1, Running: 2 };
/** The pod-deletion-cost annotation: pods with a lower cost go first. */
export const POD_DELETION_COST = 'controller.kubernetes.io/pod-deletion-cost';

function deletionCost(p: Pod): number {
  const v = Number(p.metadata?.annotations?.[POD_DELETION_COST] ?? 0);
  return Number.isFinite(v) ? v : 0;
}

/** log2 bucket of a duration, as kube's LogarithmicScaleDown compares ages (equal within a power of two). */
function logBucket(ms: number): number {
  return ms > 0 ? Math.floor(Math.log2(ms / 1000 + 1)) : 0;
}

/**
 * kube's ActivePodsWithRanks.Less: negative when `a` should be deleted before `b`. Unassigned
 * before assigned; Pending before Unknown before Running; not ready before ready; lower
 * deletion cost first; more pods of the set on the same node (rank) first; ready for less time
 * first; more restarts first; newer first — the times compared in log₂ buckets.
 */
export function compareForDeletion(a: Pod, b: Pod, rankA: number, rankB: number, nowMs: number): number {
  const assigned = (p: Pod): number => (p.spec?.nodeName ? 1 : 0);
  if (assigned(a) !== assigned(b)) return assigned(a) - assigned(b);
  const phase = (p: Pod): number => PHASE_RANK[p.status?.phase ?? 'Pending'] ?? 0;
  if (phase(a) !== phase(b)) return phase(a) - phase(b);
  const ready = (p: Pod): number => (isPodReady(p) ? 1 : 0);
  if (ready(a) !== ready(b)) return ready(a) - ready(b);
  if (deletionCost(a) !== deletionCost(b)) return deletionCost(a) - deletionCost(b);
  if (rankA !== rankB) return rankB - rankA;
  if (isPodReady(a) && isPodReady(b)) {
    const readyFor = (p: Pod): number =>
      logBucket(nowMs - Date.parse(readyCondition(p)?.lastTransitionTime ?? '') || 0);
    if (readyFor(a) !== readyFor(b)) return readyFor(a) - readyFor(b);
  }
  const restarts = (p: Pod): number =>
    Math.max(0, ...(p.status?.containerStatuses ?? []).map((c) => c.restartCount ?? 0));
  if (restarts(a) !== restarts(b)) return restarts(b) - restarts(a);
  const age = (p: Pod): number => logBucket(nowMs - Date.parse(p.metadata?.creationTimestamp ?? '') || 0);
  if (age(a) !== age(b)) return age(a) - age(b);
  return (a.metadata?.uid ?? '') < (b.metadata?.uid ?? '')
    ? -1
    : (a.metadata?.uid ?? '') > (b.metadata?.uid ?? '')
      ? 1
      : 0;
}

/**
 * kube's getPodsToDelete: the `count` pods to delete first, each ranked by the active `related`
 * pods on its node (the pods of every ReplicaSet of the same Deployment; by default `pods` themselves).
 */
export function podsToDelete(
  pods: readonly Pod[],
  count: number,
  nowMs: number,
  related: readonly Pod[] = pods,
): Pod[] {
  const onNode = new Map<string, number>();
  for (const p of related)
    if (p.spec?.nodeName && isPodActive(p)) onNode.set(p.spec.nodeName, (onNode.get(p.spec.nodeName) ?? 0) + 1);
  const rank = (p: Pod): number => (p.spec?.nodeName ? (onNode.get(p.spec.nodeName) ?? 0) : 0);
  return [...pods].sort((a, b) => compareForDeletion(a, b, rank(a), rank(b), nowMs)).slice(0, Math.max(0, count));
}

/** kube's slowStartBatch sizes for `count` creations: 1, 2, 4, … (the last one what is left). */
export function slowStartBatches(count: number, initial = 1): number[] {
  const out: number[] = [];
  let left = count;
  let size = Math.min(left, initial);
  while (size > 0) {
    out.push(size);
    left -= size;
    size = Math.min(2 * size, left);
  }
  return out;
}

/** On every StatefulSet pod: its own name (a Service per pod can select it). */
export const STATEFULSET_POD_NAME_LABEL = 'statefulset.kubernetes.io/pod-name';
/** On every StatefulSet pod (1.28+): its ordinal. */
export const POD_INDEX_LABEL = 'apps.kubernetes.io/pod-index';
/** The ControllerRevision a pod was made from (`<sts>-<hash>`). */
export const CONTROLLER_REVISION_HASH_LABEL = 'controller-revision-hash';

/** The Job's generated selector labels; the unprefixed ones are kept for older clients. */
export const JOB_CONTROLLER_UID_LABEL = 'batch.kubernetes.io/controller-uid';
export const LEGACY_JOB_CONTROLLER_UID_LABEL = 'controller-uid';
export const JOB_NAME_LABEL = 'batch.kubernetes.io/job-name';
export const LEGACY_JOB_NAME_LABEL = 'job-name';
/** Keeps a Job's pod until the Job controller has counted it. */
export const JOB_TRACKING_FINALIZER = 'batch.kubernetes.io/job-tracking';

export const JOB_CONDITION_TYPES = ['Suspended', 'Complete', 'Failed', 'FailureTarget', 'SuccessCriteriaMet'] as const;
export type JobConditionType = (typeof JOB_CONDITION_TYPES)[number];
