/**
 * The controller runtime every controller and sidecar loop runs on (controller-runtime's
 * Controller): it owns the work queue, starts the informers its sources read, waits for their
 * caches with a timeout, runs the workers, maps each reconcile outcome to a queue action in one
 * place, records queue and reconcile metrics under Kubernetes' names, and shuts down by draining.
 */
import { realClock, type Clock } from '../util/backoff.js';
import { ConflictError, TimeoutError, toStowageError } from '../util/errors.js';
import { newLogger, type Logger } from '../util/log.js';
import type { MetricsRegistry } from '../util/metrics.js';
import { childAbortController } from '../util/abort.js';
import { runInformers, waitForCacheSync, type EventHandler, type Informer } from './informer.js';
import { newQueueMetrics, newReconcileMetrics } from './controller-metrics.js';
import { DEFAULT_RATE_LIMIT, newWorkQueue, type RateLimiterPolicy, type WorkQueue } from './workqueue.js';

export interface ReconcileResult {
  /** Reconcile again after this delay even on success (level-triggered polling). */
  readonly requeueAfterMs?: number;
}

export type ReconcileFn<K> = (key: K, signal: AbortSignal) => Promise<ReconcileResult | void>;

/** How sources put keys in the queue; handlers should do nothing else. */
export interface Enqueuer<K> {
  add(key: K): void;
  addAfter(key: K, ms: number): void;
}

/** An informer as far as the runtime needs it: start it, wait for its first list. */
export type SyncedInformer = Pick<Informer<unknown>, 'run' | 'waitForSync'>;

/**
 * What feeds a controller's queue. `informers` must have synced before any worker starts; the
 * runtime starts those not running yet. `start` hooks the source up once, at controller start.
 */
export interface Source<K> {
  readonly informers: readonly SyncedInformer[];
  start(queue: Enqueuer<K>, signal: AbortSignal): void;
}

/** Events of `informer` mapped to keys by `handler` (controller-runtime's Watches). */
export function watch<T, K>(informer: Informer<T>, handler: (queue: Enqueuer<K>) => EventHandler<T>): Source<K> {
  return { informers: [informer], start: (q) => informer.addEventHandler(handler(q)) };
}

/** Informers a reconcile reads without watching them: their caches must be synced too. */
export function reads<K>(...informers: readonly SyncedInformer[]): Source<K> {
  return { informers, start: () => undefined };
}

/** Calls `tick` every `everyMs` on `clock` once the controller runs (a resync safety net). */
export function every<K>(everyMs: number, tick: (queue: Enqueuer<K>) => void, clock: Clock = realClock): Source<K> {
  return {
    informers: [],
    start: (q, signal) => {
      void (async () => {
        for (;;) {
          try {
            await clock.sleep(everyMs, signal);
          } catch {
            return; // the controller stopped
          }
          tick(q);
        }
      })();
    },
  };
}

export interface ControllerOptions<K> {
  /** Names the queue (workqueue_* `name`) and the controller (controller_runtime_* `controller`). */
  readonly name: string;
  readonly sources: ReadonlyArray<Source<K>>;
  readonly reconcile: ReconcileFn<K>;
  /** Concurrent reconciles; the queue never hands one key to two of them. Default 1. */
  readonly workers?: number;
  readonly rateLimit?: RateLimiterPolicy;
  /** controller-runtime's CacheSyncTimeout; default 2 min as there. */
  readonly cacheSyncTimeoutMs?: number;
  readonly metrics?: MetricsRegistry;
  readonly clock?: Clock;
  readonly log?: Logger;
}

/** controller-runtime's default CacheSyncTimeout. */
export const DEFAULT_CACHE_SYNC_TIMEOUT_MS = 120_000;

/** The caches of a controller's sources did not sync in time; the controller did not start. */
export class CacheSyncTimeoutError extends TimeoutError {}

export interface Controller<K> extends Enqueuer<K> {
  readonly name: string;
  /** Rate-limited add (for work that fails outside reconcile, e.g. a background write). */
  addRateLimited(key: K): void;
  /**
   * Starts informers not yet running, waits for the caches, then runs the workers until `signal`
   * aborts; resolves once every worker has finished its item and the informers it started have
   * stopped. Aborted before the caches synced, it resolves without reconciling. Rejects when
   * called twice, and with CacheSyncTimeoutError when the caches do not sync in time.
   */
  run(signal: AbortSignal): Promise<void>;
}

/** Builds a controller; nothing runs until `run`. */
export function newController<K>(o: ControllerOptions<K>): Controller<K> {
  const clock = o.clock ?? realClock;
  const log = o.log ?? newLogger(o.name);
  // Durations: the injected clock in tests, the monotonic high-resolution one otherwise.
  const now = o.clock ? () => clock.now() : () => performance.now();
  const queueMetrics = o.metrics ? newQueueMetrics<K>(o.metrics, o.name, () => queue.len(), now) : undefined;
  const queue: WorkQueue<K> = newWorkQueue<K>({
    name: o.name,
    clock,
    rateLimit: o.rateLimit ?? DEFAULT_RATE_LIMIT,
    metrics: queueMetrics,
  });
  const reconcileMetrics = o.metrics ? newReconcileMetrics(o.metrics, o.name) : undefined;
  let started = false;

  /** controller-runtime's reconcileHandler: the one place outcomes become queue actions. */
  const handle = async (key: K, signal: AbortSignal): Promise<void> => {
    const t0 = now();
    try {
      const r = await o.reconcile(key, signal);
      queue.forget(key);
      if (r?.requeueAfterMs !== undefined && r.requeueAfterMs > 0) {
        queue.addAfter(key, r.requeueAfterMs);
        reconcileMetrics?.outcome('requeue_after');
      } else reconcileMetrics?.outcome('success');
    } catch (e) {
      const err = toStowageError(e);
      reconcileMetrics?.outcome('error', !err.retryable);
      if (err.retryable) {
        queue.addRateLimited(key);
        // A lost optimistic-concurrency race is routine: retried at once (5 ms), not worth a warning.
        (err instanceof ConflictError ? log.debug : log.warn)('reconcile failed; requeued with backoff', {
          key: String(key),
          error: err.message,
          requeues: queue.numRequeues(key),
        });
      } else {
        queue.forget(key);
        log.warn('reconcile failed and retrying cannot help; key dropped until it changes', {
          key: String(key),
          error: err.message,
          code: err.code,
        });
      }
    } finally {
      reconcileMetrics?.time((now() - t0) / 1000);
      queue.done(key);
    }
  };

  const worker = async (signal: AbortSignal): Promise<void> => {
    for (;;) {
      const item = await queue.get();
      if (item.shutdown) return;
      await handle(item.key, signal);
    }
  };

  return {
    name: o.name,
    add: (k) => queue.add(k),
    addAfter: (k, ms) => queue.addAfter(k, ms),
    addRateLimited: (k) => queue.addRateLimited(k),
    async run(parent: AbortSignal): Promise<void> {
      if (started) throw new Error(`controller ${o.name} was already started`);
      started = true;
      const stop = childAbortController(parent);
      const signal = stop.signal;
      const onAbort = (): void => void queue.shutDownWithDrain();
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
      for (const s of o.sources) s.start(queue, signal);
      const informers = [...new Set(o.sources.flatMap((s) => s.informers))];
      // Shared informers live as long as the caller's signal, not as this controller (one listener on it for all).
      const informerSignal = childAbortController(parent).signal;
      const runs = informers.flatMap((i) => startInformer(i, informerSignal, log));
      try {
        if (!(await cachesSynced(informers, signal, clock, o.cacheSyncTimeoutMs ?? DEFAULT_CACHE_SYNC_TIMEOUT_MS))) {
          if (signal.aborted) return; // stopped before the caches synced: nothing to reconcile
          throw new CacheSyncTimeoutError(`controller ${o.name}: timed out waiting for caches to sync`);
        }
        const n = Math.max(1, o.workers ?? 1);
        log.debug('caches synced; starting workers', { workers: n });
        await Promise.all(Array.from({ length: n }, () => worker(signal)));
      } finally {
        stop.abort();
        queueMetrics?.close();
        if (parent.aborted) await Promise.allSettled(runs);
      }
    },
  };
}

/** True once every cache synced; false when `signal` aborted or `timeoutMs` passed first. */
async function cachesSynced(
  informers: readonly SyncedInformer[],
  signal: AbortSignal,
  clock: Clock,
  timeoutMs: number,
): Promise<boolean> {
  const timer = childAbortController(signal);
  try {
    return await Promise.race([
      waitForCacheSync(timer.signal, ...informers).then(() => true),
      clock.sleep(timeoutMs, timer.signal).then(() => false),
    ]);
  } catch (e) {
    if (signal.aborted) return false;
    throw e;
  } finally {
    timer.abort();
  }
}

// Informers are shared between controllers: the first controller needing one starts it and
// awaits it on shutdown; the others only wait for its cache.
const running = new WeakSet<SyncedInformer>();

function startInformer(i: SyncedInformer, signal: AbortSignal, log: Logger): Promise<void>[] {
  if (running.has(i)) return [];
  running.add(i);
  return runInformers(signal, [i], log);
}
