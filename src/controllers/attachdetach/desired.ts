/**
 * Desired state of world, pure (the DSW populator's job): every CSI PV that a pod scheduled to a
 * live, controller-managed node uses through a bound claim, for drivers that require attach.
 */
import {
  ANN_CONTROLLER_MANAGED_ATTACH_DETACH,
  attachmentName,
  uniqueVolumeName,
  type CSIDriver,
  type DesiredAttachment,
  type Node,
  type PersistentVolume,
  type PersistentVolumeClaim,
  type Pod,
  type PodRef,
} from './types.js';
import { podVolumeClaimName } from '../../kube/ephemeral.js';

export interface DesiredInputs {
  readonly pods: readonly Pod[];
  claim(namespace: string, name: string): PersistentVolumeClaim | undefined;
  volume(name: string): PersistentVolume | undefined;
  csiDriver(name: string): CSIDriver | undefined;
  node(name: string): Node | undefined;
  /** Nodes that are gone (deleted, or out of service with an expired lease): nothing is desired there. */
  isGone(nodeName: string): boolean;
}

export function isControllerManaged(n: Node | undefined): boolean {
  return n?.metadata?.annotations?.[ANN_CONTROLLER_MANAGED_ATTACH_DETACH] === 'true';
}

/** A missing CSIDriver object, or attachRequired unset, means attach is required (as in kube). */
export function attachRequired(d: CSIDriver | undefined): boolean {
  return d?.spec?.attachRequired ?? true;
}

export function multiAttachAllowed(pv: PersistentVolume): boolean {
  const modes = pv.spec?.accessModes ?? [];
  if (modes.length === 0) return true;
  return modes.includes('ReadWriteMany') || modes.includes('ReadOnlyMany');
}

/**
 * volumeutil.IsPodTerminated: a finished pod, or one being deleted with no container running.
 * The node's volumesInUse still guards the detach, so a volume is never pulled from under a mount.
 */
export function podTerminated(p: Pod): boolean {
  if (p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed') return true;
  if (!p.metadata?.deletionTimestamp) return false;
  const st = p.status;
  return ![
    ...(st?.initContainerStatuses ?? []),
    ...(st?.containerStatuses ?? []),
    ...(st?.ephemeralContainerStatuses ?? []),
  ].some((c) => c.state?.running !== undefined);
}

function podClaims(p: Pod): string[] {
  return (p.spec?.volumes ?? []).flatMap((v) => {
    const claim = podVolumeClaimName(p, v);
    return claim ? [claim] : [];
  });
}

/** Desired attachments by VolumeAttachment name; pods listed in input order. */
export function desiredAttachments(i: DesiredInputs): Map<string, DesiredAttachment> {
  const out = new Map<string, { a: Omit<DesiredAttachment, 'pods'>; pods: PodRef[] }>();
  for (const p of i.pods) {
    const nodeName = p.spec?.nodeName;
    if (!nodeName || podTerminated(p)) continue;
    if (i.isGone(nodeName) || !isControllerManaged(i.node(nodeName))) continue;
    const ns = p.metadata?.namespace ?? '';
    const ref: PodRef = { namespace: ns, name: p.metadata?.name ?? '', uid: p.metadata?.uid ?? '' };
    for (const claimName of podClaims(p)) {
      const pvName = i.claim(ns, claimName)?.spec?.volumeName;
      if (!pvName) continue; // not bound yet: nothing to attach
      const pv = i.volume(pvName);
      const csi = pv?.spec?.csi;
      if (!pv || !csi || !attachRequired(i.csiDriver(csi.driver))) continue;
      const name = attachmentName(csi.volumeHandle, csi.driver, nodeName);
      let e = out.get(name);
      if (!e) {
        e = {
          a: {
            name,
            pvName,
            driver: csi.driver,
            volumeHandle: csi.volumeHandle,
            nodeName,
            uniqueName: uniqueVolumeName(csi.driver, csi.volumeHandle),
            multiAttachAllowed: multiAttachAllowed(pv),
          },
          pods: [],
        };
        out.set(name, e);
      }
      if (!e.pods.some((x) => x.uid === ref.uid && x.name === ref.name)) e.pods.push(ref);
    }
  }
  return new Map([...out].map(([k, v]) => [k, { ...v.a, pods: v.pods }]));
}
