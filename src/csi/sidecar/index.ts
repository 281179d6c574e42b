/** The CSI controller sidecar: provisioner, deleter, attacher and resizer for one driver. */
export { runCsiSidecar, runCsiSidecarWithLeaderElection, type CsiSidecarOptions } from './sidecar.js';
export { attacherFinalizer, pvNameForClaim, PROVISIONER_FINALIZER, REASONS } from './names.js';
