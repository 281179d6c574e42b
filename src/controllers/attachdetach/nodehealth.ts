/**
 * Is a node gone for attach/detach purposes? Deleted, or tainted out-of-service by an operator
 * while its kube-node-lease Lease has been expired for longer than a grace period. Kubernetes'
 * own answer is a fixed 6-minute wait for an unmount that a dead node can never report; here both
 * conditions together are the proof that nothing on the node still uses the volume.
 */
import { TAINT_OUT_OF_SERVICE, type Lease, type Node } from './types.js';

export type NodeLiveness =
  | { readonly kind: 'alive' }
  | { readonly kind: 'gone'; readonly why: string }
  | { readonly kind: 'dying'; readonly goneAtMs: number };

export function hasOutOfServiceTaint(n: Node): boolean {
  return (n.spec?.taints ?? []).some(
    (t) => t.key === TAINT_OUT_OF_SERVICE && (t.effect === 'NoExecute' || t.effect === 'NoSchedule'),
  );
}

/** Milliseconds at which the lease stops being valid; 0 when there is no usable lease. */
export function leaseExpiresAt(l: Lease | undefined): number {
  const renew = l?.spec?.renewTime ?? l?.spec?.acquireTime;
  const t = renew ? Date.parse(renew) : NaN;
  if (Number.isNaN(t)) return 0;
  return t + (l?.spec?.leaseDurationSeconds ?? 40) * 1000; // 40 s: the kubelet's default node lease duration
}

export function nodeLiveness(
  n: Node | undefined,
  lease: Lease | undefined,
  nowMs: number,
  graceMs: number,
): NodeLiveness {
  if (!n) return { kind: 'gone', why: 'node deleted' };
  if (!hasOutOfServiceTaint(n)) return { kind: 'alive' };
  const goneAt = leaseExpiresAt(lease) + graceMs;
  if (goneAt <= nowMs) return { kind: 'gone', why: 'node out of service and its lease expired' };
  return { kind: 'dying', goneAtMs: goneAt };
}
