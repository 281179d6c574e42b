/** Stowage's client machinery: what controllers and the node agent import. */
export { RestClient, PATCH_CONTENT_TYPES } from './rest.js';
export type {
  RestConfig,
  ResourceClient,
  ObjectList,
  KubeObjectLike,
  ListOptions,
  WatchOptions,
  WriteOptions,
  PatchOptions,
  PatchType,
  DeleteOptions,
  SelectorOptions,
} from './rest.js';
export { loadKubeconfig } from './kubeconfig.js';
export { KINDS, apiVersionOf, collectionPath, objectPath } from './kinds.js';
export type { KindInfo, KindMap, KindName } from './kinds.js';
export { WatchDecoder, parseWatchLine } from './watch.js';
export type { WatchEvent, WatchEventType } from './watch.js';
export { errorFromStatus, parseStatus } from './status.js';
export { retryOnConflict } from './retry.js';
export { ObjectCache, metaNamespaceKey, splitKey, NAMESPACE_INDEX } from './cache.js';
export type { Lister, IndexFunc } from './cache.js';
export { Reflector, listerWatcherFor } from './reflector.js';
export type { ListerWatcher, ReflectorSink } from './reflector.js';
export { newInformer, informerFor, isTombstone, objectOf, stripManagedFields } from './informer.js';
export type { Informer, EventHandler, Tombstone, InformerOptions } from './informer.js';
export { newWorkQueue, rateLimitDelay, DEFAULT_RATE_LIMIT } from './workqueue.js';
export type { WorkQueue, GetResult, RateLimiterPolicy } from './workqueue.js';
export { newEventRecorder, EventCorrelator, eventKey, aggregateKey, referenceTo } from './events.js';
export type { EventRecorder, EventType } from './events.js';
export {
  DEFAULT_TIMINGS,
  LeaderElectionLostError,
  LeaderElector,
  NotLeaderError,
  apiLeaseLock,
  decide,
  nextLeaseSpec,
  runLeaderElected,
  timingsError,
} from './leaderelection.js';
export type {
  ElectionDecision,
  ElectionEnd,
  ElectionTimings,
  LeaderElectionConfig,
  LeaderElectorOptions,
  LeaseLock,
} from './leaderelection.js';
export {
  newController,
  watch,
  reads,
  every,
  CacheSyncTimeoutError,
  DEFAULT_CACHE_SYNC_TIMEOUT_MS,
} from './controller.js';
export type {
  Controller,
  ControllerOptions,
  Enqueuer,
  ReconcileFn,
  ReconcileResult,
  Source,
  SyncedInformer,
} from './controller.js';
