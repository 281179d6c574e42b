/** The attach/detach controller: VolumeAttachments for pods' CSI volumes, node volumesAttached. */
export { runAttachDetachController } from './run.js';
export type { AttachDetachOptions } from './run.js';
export {
  desiredAttachments,
  attachRequired,
  multiAttachAllowed,
  isControllerManaged,
  podTerminated,
} from './desired.js';
export { reconcileAttachments, multiAttachMessage } from './reconcile.js';
export { attachEvents } from './events.js';
export type { AttachOp, NodeState, ReconcileInput } from './reconcile.js';
export { nodeLiveness, leaseExpiresAt, hasOutOfServiceTaint } from './nodehealth.js';
export {
  attachmentName,
  uniqueVolumeName,
  ANN_CONTROLLER_MANAGED_ATTACH_DETACH,
  TAINT_OUT_OF_SERVICE,
} from './types.js';
export type { DesiredAttachment, ActualAttachment } from './types.js';
