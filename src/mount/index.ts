export { MountError, run, DEFAULT_COMMAND_TIMEOUT_MS, type RunOptions } from './exec.js';
export {
  parseMountInfo,
  readMountInfo,
  unescapeMountField,
  findMount,
  isMountPoint,
  mountsUnder,
  mountsOfSource,
  MOUNTINFO_PATH,
  type MountInfoEntry,
} from './mountinfo.js';
export {
  mount,
  bindMount,
  remountReadOnly,
  unmount,
  unmountAll,
  cleanupMountPoint,
  isReadOnlyMount,
  MAX_STACKED_MOUNTS,
  type BindMountOptions,
  type UnmountOptions,
} from './mount.js';
export {
  attachLoop,
  detachLoop,
  findLoopByBackingFile,
  listLoopDevices,
  isLoopAttached,
  refreshLoopCapacity,
  type LoopDevice,
  type LoopOptions,
} from './loop.js';
export { makeRShared, releaseRShared, planRShared, mountHolding, isShared, type SharedPlan } from './shared.js';
