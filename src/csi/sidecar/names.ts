/**
 * Names, annotation keys, finalizers and reasons the Kubernetes CSI sidecars use, as one table
 * each, so that every user-visible string lives in one place.
 */

export {
  ANN_STORAGE_PROVISIONER,
  ANN_BETA_STORAGE_PROVISIONER,
  ANN_SELECTED_NODE,
  ANN_PROVISIONED_BY,
} from '../../kube/names.js';
// external-provisioner records where the provisioner secret was, so that DeleteVolume can get it
// after the StorageClass is gone.
export const ANN_DELETION_SECRET_NAME = 'volume.kubernetes.io/provisioner-deletion-secret-name';
export const ANN_DELETION_SECRET_NAMESPACE = 'volume.kubernetes.io/provisioner-deletion-secret-namespace';

export const PROVISIONER_FINALIZER = 'external-provisioner.volume.kubernetes.io/finalizer';
/** On a claim being cloned, until every claim cloning it is bound (or gone). */
export const CLONE_FINALIZER = 'provisioner.storage.kubernetes.io/cloning-protection';

/**
 * external-attacher records on a VolumeAttachment the node ID it publishes to, before
 * ControllerPublish: a detach can then unpublish even when the CSINode no longer lists the driver.
 */
export const ANN_VA_NODE_ID = 'csi.alpha.kubernetes.io/node-id';

/** `external-attacher/<driver>` with every non-alphanumeric character replaced by `-`. */
export function attacherFinalizer(driver: string): string {
  return `external-attacher/${driver.replace(/[^a-zA-Z0-9]/g, '-')}`;
}

/** The PV (and CSI volume) name for a claim: `pvc-<claim uid>`, external-provisioner's default prefix. */
export function pvNameForClaim(claimUid: string): string {
  return `pvc-${claimUid}`;
}

export const REASONS = {
  Provisioning: 'Provisioning',
  ProvisioningSucceeded: 'ProvisioningSucceeded',
  ProvisioningFailed: 'ProvisioningFailed',
  ProvisioningCleanupFailed: 'ProvisioningCleanupFailed',
  VolumeFailedDelete: 'VolumeFailedDelete',
  Resizing: 'Resizing',
  VolumeResizeSuccessful: 'VolumeResizeSuccessful',
  VolumeResizeFailed: 'VolumeResizeFailed',
  FileSystemResizeRequired: 'FileSystemResizeRequired',
} as const;

/** Lease name for `--leader-elect`, one per driver and sidecar as external-* name theirs. */
export function leaseName(driver: string): string {
  return `external-csi-sidecar-${driver.replace(/[^a-zA-Z0-9-]/g, '-')}`.toLowerCase().slice(0, 63).replace(/-+$/, '');
}

/** volumeAttributes key naming the provisioner instance that created a volume (as external-provisioner writes it). */
export const ATTR_PROVISIONER_IDENTITY = 'storage.kubernetes.io/csiProvisionerIdentity';

/** external-provisioner's identity format: `<start ms>-<random>-<driver>`, one per sidecar run. */
export function provisionerIdentity(driver: string, startMs: number, random: number): string {
  return `${startMs}-${random}-${driver}`;
}
