/**
 * Small pure rules of the scheduler runtime: which pods are ours, which node changes can make a
 * pod fit, the PodScheduled condition, and the PV as the scheduler pre-binds it.
 */
import { referenceTo } from '../../client/events.js';
import { metaTime } from '../../util/metatime.js';
import type { PodCondition } from 'kubernetes-types/core/v1.js';
import type { Clock } from '../../util/backoff.js';
import {
  ANN_BOUND_BY_CONTROLLER,
  DEFAULT_SCHEDULER_NAME,
  isTerminal,
  type Node,
  type PersistentVolume,
  type PersistentVolumeClaim,
  type Pod,
} from './types.js';

/** Should this scheduler place the pod at all? */
export function isPodToSchedule(p: Pod, schedulerName: string): boolean {
  if (p.spec?.nodeName) return false;
  if ((p.spec?.schedulerName ?? DEFAULT_SCHEDULER_NAME) !== schedulerName) return false;
  if (p.metadata?.deletionTimestamp || isTerminal(p)) return false;
  return (p.spec?.schedulingGates ?? []).length === 0;
}

/** Did anything the filters look at change between two versions of a node? */
export function nodeSchedulingChanged(a: Node, b: Node): boolean {
  const ready = (n: Node): boolean =>
    (n.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
  return (
    ready(a) !== ready(b) ||
    Boolean(a.spec?.unschedulable) !== Boolean(b.spec?.unschedulable) ||
    JSON.stringify(a.metadata?.labels ?? {}) !== JSON.stringify(b.metadata?.labels ?? {}) ||
    JSON.stringify(a.spec?.taints ?? []) !== JSON.stringify(b.spec?.taints ?? [])
  );
}

/** The pod's conditions with PodScheduled set; null when nothing would change. */
export function withScheduledCondition(
  p: Pod,
  c: Pick<PodCondition, 'status' | 'reason' | 'message'>,
  nowIso: string,
): PodCondition[] | null {
  const conds = p.status?.conditions ?? [];
  const cur = conds.find((x) => x.type === 'PodScheduled');
  if (cur && cur.status === c.status && cur.reason === c.reason && cur.message === c.message) return null;
  const next: PodCondition = {
    type: 'PodScheduled',
    status: c.status,
    ...(c.reason ? { reason: c.reason } : {}),
    ...(c.message ? { message: c.message } : {}),
    lastTransitionTime: cur && cur.status === c.status ? cur.lastTransitionTime : nowIso,
  };
  return [...conds.filter((x) => x.type !== 'PodScheduled'), next];
}

/** metav1.Time of the clock: RFC 3339, second precision. */
export function nowIso(clock: Clock): string {
  return metaTime(clock.now());
}

/** The PV as AssumePodVolumes pre-binds it (volume.GetBindVolumeToClaim): claimRef with uid, bound-by-controller. */
export function preboundVolume(volume: PersistentVolume, claim: PersistentVolumeClaim): PersistentVolume {
  const next = structuredClone(volume);
  next.metadata = {
    ...(next.metadata ?? {}),
    annotations: { ...(next.metadata?.annotations ?? {}), [ANN_BOUND_BY_CONTROLLER]: 'yes' },
  };
  next.spec = {
    ...(next.spec ?? {}),
    claimRef: referenceTo(claim, 'PersistentVolumeClaim'),
  };
  return next;
}
