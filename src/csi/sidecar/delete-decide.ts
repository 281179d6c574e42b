/** Pure decision of the deleter: what to do with a PV of this driver. */
import type { PersistentVolume } from 'kubernetes-types/core/v1.js';
import type { VolumeAttachment } from 'kubernetes-types/storage/v1.js';
import { ANN_PROVISIONED_BY, PROVISIONER_FINALIZER } from './names.js';

export type VolumeDecision =
  | { kind: 'skip'; why: string }
  /** Delete the CSI volume, then drop our finalizer and the PV object. */
  | { kind: 'delete'; volumeId: string }
  /** The PV is going away but its volume is to be kept (Retain): only our finalizer stands in the way. */
  | { kind: 'removeFinalizer' };

/**
 * shouldDelete: a PV provisioned by this driver, Released with reclaim policy Delete, or deleted
 * by the user while it still carries our finalizer (HonorPVReclaimPolicy: reclaim policy decides
 * whether the volume goes with it).
 */
export function decideVolume(pv: PersistentVolume, driver: string): VolumeDecision {
  if (pv.metadata?.annotations?.[ANN_PROVISIONED_BY] !== driver)
    return { kind: 'skip', why: 'not provisioned by this driver' };
  const csi = pv.spec?.csi;
  if (!csi || csi.driver !== driver) return { kind: 'skip', why: 'not a CSI volume of this driver' };
  const policy = pv.spec?.persistentVolumeReclaimPolicy ?? 'Retain';
  const ours = (pv.metadata?.finalizers ?? []).includes(PROVISIONER_FINALIZER);
  if (pv.metadata?.deletionTimestamp) {
    if (!ours) return { kind: 'skip', why: 'being deleted, nothing of ours left' };
    return policy === 'Delete' ? { kind: 'delete', volumeId: csi.volumeHandle } : { kind: 'removeFinalizer' };
  }
  if (pv.status?.phase !== 'Released') return { kind: 'skip', why: `phase ${pv.status?.phase ?? ''}` };
  if (policy !== 'Delete') return { kind: 'skip', why: `reclaim policy ${policy}` };
  return { kind: 'delete', volumeId: csi.volumeHandle };
}

/** A VolumeAttachment still holding the PV (deleting an attached volume would pull it from under a node). */
export function attachmentOf(pvName: string, vas: readonly VolumeAttachment[]): VolumeAttachment | undefined {
  return vas.find(
    (va) =>
      va.spec?.source?.persistentVolumeName === pvName &&
      (va.status?.attached || (va.metadata?.finalizers ?? []).length > 0),
  );
}
