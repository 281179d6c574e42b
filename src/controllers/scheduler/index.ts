/** Stowage's scheduler: volume-aware pod placement (kube-scheduler's volume plugins in essence). */
export { runScheduler } from './run.js';
export { isPodToSchedule, withScheduledCondition, nodeSchedulingChanged, preboundVolume } from './policy.js';
export type { SchedulerOptions } from './run.js';
export { schedulePod, fitErrorMessage } from './schedule.js';
export type { ScheduleDecision } from './schedule.js';
export { volumeBindingState } from './prebind.js';
export type { VolumeBindingState } from './prebind.js';
export { REASONS, MSG_UNBOUND_IMMEDIATE, DEFAULT_SCHEDULER_NAME } from './types.js';
export type { ClusterView } from './types.js';
