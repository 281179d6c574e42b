/**
 * Pure decisions of the resizer (external-resizer with Kubernetes' RecoverVolumeExpansionFailure):
 * `status.allocatedResources` holds the size the controller is working towards, and
 * `status.allocatedResourceStatuses.storage` where that work stands.
 */
import type {
  PersistentVolume,
  PersistentVolumeClaim,
  PersistentVolumeClaimCondition,
} from 'kubernetes-types/core/v1.js';
import { bytesOf } from '../../kube/quantity.js';

// v1.30 names (1.31 renamed the *Failed states *Infeasible), as the API server validates them.
export const RESIZE_STATUSES = [
  'ControllerResizeInProgress',
  'ControllerResizeFailed',
  'NodeResizePending',
  'NodeResizeInProgress',
  'NodeResizeFailed',
] as const;
export type ResizeStatus = (typeof RESIZE_STATUSES)[number];

export const CONDITION_RESIZING = 'Resizing';
export const CONDITION_FS_RESIZE_PENDING = 'FileSystemResizePending';
export const CONDITION_CONTROLLER_RESIZE_ERROR = 'ControllerResizeError';
export const FS_RESIZE_PENDING_MESSAGE =
  'Waiting for user to (re-)start a pod to finish file system resize of volume on node.';

export type ResizeDecision =
  | { kind: 'skip'; why: string }
  /** ControllerExpandVolume to `bytes` (also used to finish an expansion whose status write was lost). */
  | { kind: 'expand'; bytes: bigint; pvBytes: bigint }
  /** The user lowered the request back to what the volume already has: forget the failed expansion. */
  | { kind: 'abandon'; pvBytes: bigint };

export function decideResize(
  claim: PersistentVolumeClaim,
  pv: PersistentVolume | undefined,
  driver: string,
): ResizeDecision {
  if (claim.status?.phase !== 'Bound' || !claim.spec?.volumeName) return { kind: 'skip', why: 'not bound' };
  if (!pv) return { kind: 'skip', why: 'volume not known yet' };
  if (pv.spec?.csi?.driver !== driver) return { kind: 'skip', why: 'not a volume of this driver' };
  if (pv.spec.claimRef?.uid && pv.spec.claimRef.uid !== claim.metadata?.uid)
    return { kind: 'skip', why: 'volume bound to another claim' };
  const request = bytesOf(claim.spec.resources?.requests?.storage);
  const pvBytes = bytesOf(pv.spec.capacity?.storage);
  if (request === undefined || pvBytes === undefined) return { kind: 'skip', why: 'no sizes' };
  const allocated = bytesOf(claim.status.allocatedResources?.storage);
  const rs = claim.status.allocatedResourceStatuses?.storage;
  const controllerPending = rs === 'ControllerResizeInProgress' || rs === 'ControllerResizeFailed';
  if (request > pvBytes) {
    // Retrying an infeasible size cannot help; a different request (up or down) is a new attempt.
    if (rs === 'ControllerResizeFailed' && allocated === request)
      return { kind: 'skip', why: 'infeasible; waiting for a new request' };
    return { kind: 'expand', bytes: request, pvBytes };
  }
  if (controllerPending) {
    if (allocated !== undefined && allocated <= pvBytes) return { kind: 'expand', bytes: pvBytes, pvBytes };
    return { kind: 'abandon', pvBytes };
  }
  return { kind: 'skip', why: 'volume is large enough' };
}

/** The claim's conditions with `drop` types removed and `add` (if any) appended. */
export function withConditions(
  current: readonly PersistentVolumeClaimCondition[] | undefined,
  drop: readonly string[],
  add?: { type: string; message?: string; nowIso: string },
): PersistentVolumeClaimCondition[] {
  const kept = (current ?? []).filter((c) => !drop.includes(c.type) && c.type !== add?.type);
  const prev = (current ?? []).find((c) => c.type === add?.type);
  if (!add) return kept;
  return [
    ...kept,
    {
      type: add.type,
      status: 'True',
      lastProbeTime: add.nowIso,
      lastTransitionTime: prev?.status === 'True' && prev.lastTransitionTime ? prev.lastTransitionTime : add.nowIso,
      ...(add.message ? { message: add.message } : {}),
    },
  ];
}

/** CSI errors after which the same size will never work (external-resizer's infeasible codes). */
export function isInfeasible(grpcCodeName: string | undefined): boolean {
  return grpcCodeName === 'INVALID_ARGUMENT' || grpcCodeName === 'OUT_OF_RANGE' || grpcCodeName === 'NOT_FOUND';
}
