/**
 * Finalizer decisions of the pvc-protection and pv-protection controllers (Kubernetes v1.30),
 * pure: the runtime lists pods (informer first, then a live list before removing — a pod missing
 * from the cache must not let a claim in use be deleted) and applies the decision with an update.
 */
import type { PersistentVolume, PersistentVolumeClaim, Pod } from 'kubernetes-types/core/v1.js';
import { isControlledBy, podVolumeClaimName } from '../../kube/ephemeral.js';
import { PVC_PROTECTION_FINALIZER, PV_PROTECTION_FINALIZER } from '../../kube/names.js';

export { PVC_PROTECTION_FINALIZER, PV_PROTECTION_FINALIZER };

/**
 * `add`: not being deleted and the finalizer is missing (objects from before admission added it).
 * `remove`: being deleted and nothing uses it. `keep`: being deleted but in use. `none`: nothing to do.
 */
export type FinalizerDecision =
  { kind: 'add' } | { kind: 'remove' } | { kind: 'keep'; usedBy: string[] } | { kind: 'none' };

export interface PvcProtectionOptions {
  /**
   * Kubernetes counts every scheduled pod referencing the claim, whatever its phase: a Succeeded
   * Job pod keeps its claim Terminating until the pod is deleted. `true` lets Succeeded/Failed pods
   * stop blocking (a Stowage relaxation, off by default for fidelity).
   */
  readonly ignoreTerminatedPods: boolean;
}

const hasFinalizer = (o: { metadata?: { finalizers?: string[] } }, f: string): boolean =>
  (o.metadata?.finalizers ?? []).includes(f);

/** A pod the kubelet is done with or that was force-deleted (deletionTimestamp + grace 0). */
export function podIsShutDown(pod: Pod): boolean {
  return pod.metadata?.deletionTimestamp != null && pod.metadata?.deletionGracePeriodSeconds === 0;
}

/** podUsesPVC: only scheduled pods count (the kubelet refuses to start a pod on a deleting claim). */
export function podUsesClaim(
  pod: Pod,
  claim: PersistentVolumeClaim,
  o: PvcProtectionOptions = { ignoreTerminatedPods: false },
): boolean {
  if (!pod.spec?.nodeName) return false;
  if ((pod.metadata?.namespace ?? '') !== (claim.metadata?.namespace ?? '')) return false;
  if (o.ignoreTerminatedPods && (pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed')) return false;
  const name = claim.metadata?.name ?? '';
  return (pod.spec.volumes ?? []).some((v) => {
    if (v.persistentVolumeClaim) return v.persistentVolumeClaim.claimName === name;
    if (v.ephemeral && !podIsShutDown(pod)) {
      // Generic ephemeral volume: claim <pod>-<volume>, controlled by this very pod.
      return podVolumeClaimName(pod, v) === name && isControlledBy(claim, pod.metadata?.uid);
    }
    return false;
  });
}

export function pvcProtectionDecision(
  claim: PersistentVolumeClaim,
  pods: readonly Pod[],
  o: PvcProtectionOptions = { ignoreTerminatedPods: false },
): FinalizerDecision {
  const has = hasFinalizer(claim, PVC_PROTECTION_FINALIZER);
  if (claim.metadata?.deletionTimestamp) {
    if (!has) return { kind: 'none' };
    const usedBy = pods
      .filter((p) => podUsesClaim(p, claim, o))
      .map((p) => `${p.metadata?.namespace ?? ''}/${p.metadata?.name ?? ''}`);
    return usedBy.length > 0 ? { kind: 'keep', usedBy } : { kind: 'remove' };
  }
  return has ? { kind: 'none' } : { kind: 'add' };
}

/** pv-protection: a PV is in use exactly while its phase is Bound. */
export function pvProtectionDecision(pv: PersistentVolume): FinalizerDecision {
  const has = hasFinalizer(pv, PV_PROTECTION_FINALIZER);
  if (pv.metadata?.deletionTimestamp) {
    if (!has) return { kind: 'none' };
    return pv.status?.phase === 'Bound'
      ? {
          kind: 'keep',
          usedBy: [pv.spec?.claimRef ? `${pv.spec.claimRef.namespace ?? ''}/${pv.spec.claimRef.name ?? ''}` : ''],
        }
      : { kind: 'remove' };
  }
  return has ? { kind: 'none' } : { kind: 'add' };
}

/** The object's finalizer list after applying a decision (a fresh array). */
export function applyFinalizerDecision(
  finalizers: readonly string[] | undefined,
  finalizer: string,
  d: FinalizerDecision,
): string[] {
  const cur = [...(finalizers ?? [])];
  if (d.kind === 'add' && !cur.includes(finalizer)) return [...cur, finalizer];
  if (d.kind === 'remove') return cur.filter((f) => f !== finalizer);
  return cur;
}
