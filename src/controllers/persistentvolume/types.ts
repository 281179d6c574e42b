/**
 * Vocabulary of the PersistentVolume controller: annotation keys, phases, event reasons, and the
 * two seams between decisions and the outside world — a read-only `SyncContext` and an `Effects`
 * interface whose every write returns the object as the API server stored it (new resourceVersion),
 * because a bind is a chain of writes where each one builds on the previous result.
 * Semantics follow kube-controller-manager v1.30.
 */
import type { Node, ObjectReference, PersistentVolume, PersistentVolumeClaim, Pod } from 'kubernetes-types/core/v1.js';
import type { StorageClass } from 'kubernetes-types/storage/v1.js';

export type { Node, ObjectReference, PersistentVolume, PersistentVolumeClaim, Pod, StorageClass };

export {
  ANN_BIND_COMPLETED,
  ANN_BOUND_BY_CONTROLLER,
  ANN_PROVISIONED_BY,
  ANN_STORAGE_PROVISIONER,
  ANN_BETA_STORAGE_PROVISIONER,
  ANN_SELECTED_NODE,
  ANN_MIGRATED_TO,
  ANN_BETA_STORAGE_CLASS,
  ANN_PRE_RESIZE_CAPACITY,
  ANN_DEFAULT_CLASS,
  ANN_BETA_DEFAULT_CLASS,
} from '../../kube/names.js';
/** Stowage's own, opt-in: see docs/reuse-released.md. */
export const ANN_REUSE_RELEASED = 'stowage.io/reuse-released';

export { PV_PHASES, PVC_PHASES, type PvPhase, type PvcPhase } from '../../kube/phases.js';

/** Event reasons used by the controller (pkg/controller/volume/events), one table. */
export const REASONS = {
  FailedBinding: 'FailedBinding',
  VolumeMismatch: 'VolumeMismatch',
  VolumeFailedRecycle: 'VolumeFailedRecycle',
  VolumeRecycled: 'VolumeRecycled',
  VolumeFailedDelete: 'VolumeFailedDelete',
  VolumeDelete: 'VolumeDelete',
  ExternalProvisioning: 'ExternalProvisioning',
  ProvisioningFailed: 'ProvisioningFailed',
  WaitForFirstConsumer: 'WaitForFirstConsumer',
  WaitForPodScheduled: 'WaitForPodScheduled',
  ClaimLost: 'ClaimLost',
  ClaimMisbound: 'ClaimMisbound',
  VolumeUnknownReclaimPolicy: 'VolumeUnknownReclaimPolicy',
  VolumeReuseRefused: 'VolumeReuseRefused',
  VolumeReused: 'VolumeReused',
} as const;
export type EventReason = (typeof REASONS)[keyof typeof REASONS];
export type EventType = 'Normal' | 'Warning';

export interface ControllerEvent {
  readonly object: ObjectReference;
  readonly type: EventType;
  readonly reason: EventReason;
  readonly message: string;
}

/**
 * Writes and live reads. Every method rejects with a StowageError (ConflictError, NotFoundError...)
 * from src/util/errors.ts; the sync procedures stop at the first failure and the caller requeues.
 * The executor is expected to keep per-key exclusivity; nothing here retries on its own.
 */
export interface Effects {
  /** PUT the PV (spec + metadata). Returns the stored object. */
  updateVolume(volume: PersistentVolume): Promise<PersistentVolume>;
  /** PUT the PV /status subresource. */
  updateVolumeStatus(volume: PersistentVolume): Promise<PersistentVolume>;
  /** DELETE the PV object, preconditioned on `uid` when given. */
  deleteVolume(name: string, uid?: string): Promise<void>;
  updateClaim(claim: PersistentVolumeClaim): Promise<PersistentVolumeClaim>;
  updateClaimStatus(claim: PersistentVolumeClaim): Promise<PersistentVolumeClaim>;
  /** GET from the API server (not a cache). Rejects with NotFoundError when absent. */
  liveVolume(name: string): Promise<PersistentVolume>;
  liveClaim(namespace: string, name: string): Promise<PersistentVolumeClaim>;
  /** Record an Event (the recorder aggregates repeats). Never throws. */
  event(e: ControllerEvent): void;
  /** Add a claim key (`ns/name`) to the claim work queue, at once or after `afterMs`. */
  enqueueClaim(key: string, afterMs?: number): void;
  /**
   * Start a long-running operation (delete, recycle, provision hand-off) under `name` unless one of
   * that name is running or backing off; a rejection puts the name into exponential backoff.
   */
  scheduleOperation(name: string, op: () => Promise<void>): void;
  /** Optional in-tree hostPath deleter data removal (Kubernetes removes the directory on the controller host). */
  removeHostPathData?(path: string): Promise<void>;
  /** Optional recycler (Kubernetes runs a scrubber pod). Absent: "No recycler plugin found". */
  recycle?(volume: PersistentVolume): Promise<void>;
}

/** Options where Kubernetes versions or deployments differ. */
export interface ControllerOptions {
  /** HonorPVReclaimPolicy feature gate (alpha, off, in 1.30). */
  readonly honorPVReclaimPolicy: boolean;
  /** KCM --enable-dynamic-provisioning (default true). */
  readonly enableDynamicProvisioning: boolean;
  /**
   * Stowage extension standing in for the scheduler's volume binder: a WaitForFirstConsumer claim with
   * a selected node binds to a static volume whose node affinity admits that node. Off = KCM exact.
   */
  readonly bindDelayedClaimsOnSelectedNode: boolean;
  /**
   * Stowage extension: a claim that found no volume is synced again this long after a volume it could
   * take becomes Available (Kubernetes waits for its 15 s resync). The pause lets volumes created in
   * one burst land together, so the claim sees what the resync would: a volume pre-bound to it wins.
   */
  readonly waitingClaimWakeDelayMs: number;
}

export const DEFAULT_OPTIONS: ControllerOptions = {
  honorPVReclaimPolicy: false,
  enableDynamicProvisioning: true,
  bindDelayedClaimsOnSelectedNode: false,
  waitingClaimWakeDelayMs: 1000,
};

/** Read-only lookups from informers. */
export interface Listers {
  /** Informer (not the controller's own cache) view of a claim. */
  claim(namespace: string, name: string): PersistentVolumeClaim | undefined;
  storageClass(name: string): StorageClass | undefined;
  storageClasses(): readonly StorageClass[];
  node(name: string): Node | undefined;
  /** Pods in the claim's namespace referencing the claim (by spec.volumes[].persistentVolumeClaim). */
  podsForClaim(namespace: string, name: string): readonly Pod[];
  /** Informer view of the volumes whose claimRef names the claim (any phase, with or without UID). */
  volumesPreboundTo(namespace: string, name: string): readonly PersistentVolume[];
}

export function claimKey(c: { metadata?: { namespace?: string; name?: string } }): string {
  return `${c.metadata?.namespace ?? ''}/${c.metadata?.name ?? ''}`;
}

export function claimRefKey(r: ObjectReference): string {
  return `${r.namespace ?? ''}/${r.name ?? ''}`;
}
