/** Pure decisions of the attacher (external-attacher's csi_handler, as a function of state). */
import type { PersistentVolume } from 'kubernetes-types/core/v1.js';
import type { VolumeAttachment } from 'kubernetes-types/storage/v1.js';

export type AttachDecision =
  | { kind: 'skip'; why: string }
  /** Add our finalizer to the VolumeAttachment (before any call, so a detach is never missed). */
  | { kind: 'addFinalizer' }
  | { kind: 'attach'; pvName: string; nodeName: string }
  | { kind: 'detach'; pvName: string; nodeName: string }
  /** Detached (or never attached): drop our finalizer. */
  | { kind: 'removeFinalizer' };

export function decideAttachment(va: VolumeAttachment, driver: string, finalizer: string): AttachDecision {
  if (va.spec?.attacher !== driver) return { kind: 'skip', why: 'another attacher' };
  const pvName = va.spec.source?.persistentVolumeName;
  const nodeName = va.spec.nodeName;
  const ours = (va.metadata?.finalizers ?? []).includes(finalizer);
  if (va.metadata?.deletionTimestamp) {
    if (!ours) return { kind: 'skip', why: 'being deleted, detached already' };
    if (!pvName) return { kind: 'removeFinalizer' }; // an inline volume we could never have attached
    return { kind: 'detach', pvName, nodeName };
  }
  if (!pvName) return { kind: 'skip', why: 'inline volumes are not supported' };
  if (!ours) return { kind: 'addFinalizer' };
  if (va.status?.attached) return { kind: 'skip', why: 'attached' };
  return { kind: 'attach', pvName, nodeName };
}

/**
 * The PV side: while any VolumeAttachment of ours names a PV, the PV keeps our finalizer, so that
 * the volume handle needed for ControllerUnpublish cannot disappear. Once the PV is being deleted
 * and nothing of ours references it, the finalizer goes.
 */
export function pvFinalizerAction(
  pv: PersistentVolume,
  driver: string,
  finalizer: string,
  referenced: boolean,
): 'add' | 'remove' | 'none' {
  const has = (pv.metadata?.finalizers ?? []).includes(finalizer);
  if (pv.spec?.csi?.driver !== driver) return 'none';
  if (referenced && !has && !pv.metadata?.deletionTimestamp) return 'add';
  if (!referenced && has && pv.metadata?.deletionTimestamp) return 'remove';
  return 'none';
}
