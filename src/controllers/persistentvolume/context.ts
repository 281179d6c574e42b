/** What every sync procedure receives: the controller cache, informer listers, effects, options. */
import type { PvControllerCache } from './cache.js';
import type { ControllerOptions, Effects, Listers } from './types.js';

export interface SyncContext {
  readonly cache: PvControllerCache;
  readonly listers: Listers;
  readonly fx: Effects;
  readonly options: ControllerOptions;
}
