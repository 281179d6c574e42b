/**
 * The kubelet's PLEG (pod lifecycle event generator): one relist of the whole runtime per period,
 * compared with the previous one; only the pods whose sandboxes or containers changed are woken.
 * Pure: the manager lists, these functions compare.
 */
import { LABEL_POD_UID } from './container-config.js';

/** What a relist keeps of a sandbox or container: who it belongs to and its state. */
export interface Listed {
  readonly id: string;
  readonly state: string;
  readonly labels: Readonly<Record<string, string>>;
}

/** Pod uid → a fingerprint of its sandboxes' and containers' ids and states. */
export function relistFingerprints(sandboxes: readonly Listed[], containers: readonly Listed[]): Map<string, string> {
  const parts = new Map<string, string[]>();
  const add = (kind: string, x: Listed): void => {
    const uid = x.labels[LABEL_POD_UID];
    if (!uid) return;
    const list = parts.get(uid) ?? [];
    list.push(`${kind}:${x.id}:${x.state}`);
    parts.set(uid, list);
  };
  for (const s of sandboxes) add('s', s);
  for (const c of containers) add('c', c);
  return new Map([...parts].map(([uid, list]) => [uid, list.sort().join(',')]));
}

/** The pods whose runtime state differs between two relists (appeared, changed or gone). */
export function changedPods(prev: ReadonlyMap<string, string>, next: ReadonlyMap<string, string>): Set<string> {
  const out = new Set<string>();
  for (const [uid, fp] of next) if (prev.get(uid) !== fp) out.add(uid);
  for (const uid of prev.keys()) if (!next.has(uid)) out.add(uid);
  return out;
}

/** Waiting reasons that end on their own backoff schedule, not on a short retry. */
const BACKOFF_REASONS = new Set(['CrashLoopBackOff', 'ErrImagePull', 'ImagePullBackOff']);

/** When a pod's next sync is due without any event (the kubelet's pod worker requeue). */
export function nextSyncDelayMs(o: {
  waitingForVolumes: boolean;
  waitingReasons: readonly string[];
  backoffLeftMs: readonly number[];
  resyncMs: number;
  retryMs: number;
}): number {
  // Waiting for volumes or on a config error: nothing in the runtime will change to wake the pod,
  // so it is retried on a short period. Crash-loop and image-pull backoffs wake it when they end.
  if (o.waitingForVolumes || o.waitingReasons.some((r) => !BACKOFF_REASONS.has(r))) return o.retryMs;
  const left = o.backoffLeftMs.filter((ms) => ms > 0);
  return left.length > 0 ? Math.min(o.resyncMs, ...left) : o.resyncMs;
}
