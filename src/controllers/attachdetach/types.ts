/**
 * Vocabulary of the attach/detach controller (kube-controller-manager v1.30
 * pkg/controller/volume/attachdetach): names Kubernetes computes, the annotation and taint it
 * honours, and the shapes of desired and actual state.
 */
import { createHash } from 'node:crypto';
import type { Node, PersistentVolume, PersistentVolumeClaim, Pod } from 'kubernetes-types/core/v1.js';
import type { Lease } from 'kubernetes-types/coordination/v1.js';
import type { CSIDriver, VolumeAttachment } from 'kubernetes-types/storage/v1.js';
import {
  ANN_CONTROLLER_MANAGED_ATTACH_DETACH,
  TAINT_OUT_OF_SERVICE,
  NODE_LEASE_NAMESPACE,
  CSI_PLUGIN_NAME,
} from '../../kube/names.js';

export type { CSIDriver, Lease, Node, PersistentVolume, PersistentVolumeClaim, Pod, VolumeAttachment };
export { ANN_CONTROLLER_MANAGED_ATTACH_DETACH, TAINT_OUT_OF_SERVICE, NODE_LEASE_NAMESPACE, CSI_PLUGIN_NAME };

/** csi_attacher.go getAttachmentName: "csi-" + hex(sha256(volumeHandle + driver + nodeName)). */
export function attachmentName(volumeHandle: string, driver: string, nodeName: string): string {
  return `csi-${createHash('sha256').update(`${volumeHandle}${driver}${nodeName}`).digest('hex')}`;
}

/** The unique volume name the kubelet reports in volumesInUse and the controller in volumesAttached. */
export function uniqueVolumeName(driver: string, volumeHandle: string): string {
  return `${CSI_PLUGIN_NAME}/${driver}^${volumeHandle}`;
}

export interface PodRef {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
}

/** One VolumeAttachment that should exist: a PV needed on a node by at least one pod. */
export interface DesiredAttachment {
  readonly name: string;
  readonly pvName: string;
  readonly driver: string;
  readonly volumeHandle: string;
  readonly nodeName: string;
  readonly uniqueName: string;
  /** util.IsMultiAttachAllowed: false when the PV's modes are only ReadWriteOnce / ReadWriteOncePod. */
  readonly multiAttachAllowed: boolean;
  readonly pods: readonly PodRef[];
}

/** One VolumeAttachment that exists (PV-sourced only). */
export interface ActualAttachment {
  readonly name: string;
  readonly pvName: string;
  readonly nodeName: string;
  readonly attacher: string;
  readonly attached: boolean;
  readonly deleting: boolean;
  /** Unique volume name when the PV is still known. */
  readonly uniqueName?: string;
}

export interface AttachedVolume {
  readonly name: string;
  readonly devicePath: string;
}
