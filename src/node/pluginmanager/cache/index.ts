export * from './types.js';
export { newDesiredStateOfWorld, type DesiredStateOfWorld } from './desired-state.js';
export { newActualStateOfWorld, type ActualStateOfWorld } from './actual-state.js';
