import { realClock, type Clock } from '../util/backoff.js';

/** Per-item exponential backoff: `initialMs · 2^(failures)` capped, reset by `forget`. */
export interface RateLimiterPolicy {
  readonly initialMs: number;
  readonly capMs: number;
}

// client-go's DefaultControllerRateLimiter starts at 5 ms and doubles to 1000 s; our cap is 30 s.
export const DEFAULT_RATE_LIMIT: RateLimiterPolicy = { initialMs: 5, capMs: 30_000 };

/** Delay for the (failures+1)-th rate-limited add of an item that has failed `failures` times. */
export function rateLimitDelay(p: RateLimiterPolicy, failures: number): number {
  // Math.pow overflows to Infinity long before failures grows unbounded; min() keeps the cap.
  return Math.min(p.initialMs * Math.pow(2, failures), p.capMs);
}

export type GetResult<K> =
  { readonly key: K; readonly shutdown: false } | { readonly key: undefined; readonly shutdown: true };

/**
 * A work queue with client-go semantics:
 * - an item queued twice is processed once (dirty set);
 * - an item is never handed to two workers at once: re-adding it while it is processing marks
 *   it dirty, and it is queued again when `done` is called;
 * - `addRateLimited` re-adds after a per-item exponential delay; `forget` resets that item;
 * - `addAfter` keeps the earliest pending deadline per item;
 * - after `shutDown`, adds are ignored; workers get the remaining queue, then `{shutdown: true}`.
 */
export interface WorkQueue<K> {
  add(key: K): void;
  addAfter(key: K, ms: number): void;
  addRateLimited(key: K): void;
  forget(key: K): void;
  numRequeues(key: K): number;
  get(): Promise<GetResult<K>>;
  done(key: K): void;
  /** Items waiting to be handed out (not processing, not delayed). */
  len(): number;
  shutDown(): void;
  /** Shuts down and resolves once every item being processed is done. */
  shutDownWithDrain(): Promise<void>;
  shuttingDown(): boolean;
}

/**
 * What a queue tells its metrics (client-go's queueMetrics): `added` when an item becomes
 * waiting, `taken` when a worker gets it, `done` when the worker finishes, `retried` on each
 * rate-limited add. Called synchronously inside the queue's methods.
 */
export interface WorkQueueMetrics<K> {
  added(key: K): void;
  taken(key: K): void;
  done(key: K): void;
  retried(): void;
}

export interface WorkQueueOptions<K = unknown> {
  readonly clock?: Clock;
  readonly rateLimit?: RateLimiterPolicy;
  readonly name?: string;
  readonly metrics?: WorkQueueMetrics<K>;
}

export function newWorkQueue<K>(o: WorkQueueOptions<K> = {}): WorkQueue<K> {
  return new RateLimitedQueue<K>(o);
}

/**
 * FIFO with O(1) take: Array.shift copies the whole array, which made a 100k-item queue
 * quadratic. The consumed prefix is dropped once it is most of the array.
 */
class Fifo<K> {
  private items: K[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(k: K): void {
    this.items.push(k);
  }

  shift(): K | undefined {
    if (this.head >= this.items.length) return undefined;
    const k = this.items[this.head++] as K;
    if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return k;
  }
}

class RateLimitedQueue<K> implements WorkQueue<K> {
  private readonly queue = new Fifo<K>();
  private readonly dirty = new Set<K>();
  private readonly processing = new Set<K>();
  private readonly failures = new Map<K, number>();
  private readonly delayed = new Map<K, { at: number; cancel: AbortController }>();
  private readonly getters: Array<(r: GetResult<K>) => void> = [];
  private readonly drainers: Array<() => void> = [];
  private readonly clock: Clock;
  private readonly policy: RateLimiterPolicy;
  private readonly metrics: WorkQueueMetrics<K> | undefined;
  private closing = false;

  constructor(o: WorkQueueOptions<K>) {
    this.clock = o.clock ?? realClock;
    this.policy = o.rateLimit ?? DEFAULT_RATE_LIMIT;
    this.metrics = o.metrics;
  }

  add(key: K): void {
    if (this.closing || this.dirty.has(key)) return;
    this.dirty.add(key);
    this.metrics?.added(key);
    if (this.processing.has(key)) return; // queued again by done()
    this.enqueue(key);
  }

  addAfter(key: K, ms: number): void {
    if (this.closing) return;
    if (ms <= 0) return this.add(key);
    const at = this.clock.now() + ms;
    const pending = this.delayed.get(key);
    if (pending && pending.at <= at) return;
    pending?.cancel.abort();
    const cancel = new AbortController();
    this.delayed.set(key, { at, cancel });
    this.clock.sleep(ms, cancel.signal).then(
      () => {
        if (this.delayed.get(key)?.cancel === cancel) this.delayed.delete(key);
        this.add(key);
      },
      () => undefined, // cancelled: superseded by an earlier deadline, or shut down
    );
  }

  addRateLimited(key: K): void {
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    this.metrics?.retried();
    this.addAfter(key, rateLimitDelay(this.policy, n));
  }

  forget(key: K): void {
    this.failures.delete(key);
  }

  numRequeues(key: K): number {
    return this.failures.get(key) ?? 0;
  }

  get(): Promise<GetResult<K>> {
    const key = this.take();
    if (key !== undefined) return Promise.resolve({ key: key.v, shutdown: false });
    if (this.closing) return Promise.resolve({ key: undefined, shutdown: true });
    return new Promise((resolve) => this.getters.push(resolve));
  }

  done(key: K): void {
    if (!this.processing.delete(key)) return;
    this.metrics?.done(key);
    if (this.dirty.has(key)) this.enqueue(key);
    if (this.processing.size === 0) for (const d of this.drainers.splice(0)) d();
  }

  len(): number {
    return this.queue.length;
  }

  shutDown(): void {
    if (this.closing) return;
    this.closing = true;
    for (const d of this.delayed.values()) d.cancel.abort();
    this.delayed.clear();
    // Waiting workers only exist when the queue is empty: release them.
    for (const g of this.getters.splice(0)) g({ key: undefined, shutdown: true });
  }

  shutDownWithDrain(): Promise<void> {
    this.shutDown();
    if (this.processing.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.drainers.push(resolve));
  }

  shuttingDown(): boolean {
    return this.closing;
  }

  private enqueue(key: K): void {
    const g = this.getters.shift();
    if (g) {
      this.dirty.delete(key);
      this.processing.add(key);
      this.metrics?.taken(key);
      g({ key, shutdown: false });
    } else {
      this.queue.push(key);
    }
  }

  private take(): { v: K } | undefined {
    if (this.queue.length === 0) return undefined;
    const v = this.queue.shift() as K;
    this.dirty.delete(v);
    this.processing.add(v);
    this.metrics?.taken(v);
    return { v };
  }
}
