import { describe, expect, it } from 'vitest';
import { ConflictError, InvalidError, NotFoundError } from '../util/errors.js';
import { MetricsRegistry } from '../util/metrics.js';
import { ObjectCache } from './cache.js';
import { every, newController, reads, watch, CacheSyncTimeoutError, type ReconcileResult } from './controller.js';
import { FakeClock, flushMicrotasks } from './fake-clock.test-kit.js';
import type { EventHandler, Informer } from './informer.js';

interface Obj {
  metadata: { name: string };
}

/** An informer whose sync and events the test drives; counts how often it was started. */
class FakeInformer implements Informer<Obj> {
  readonly lister = new ObjectCache<Obj>();
  starts = 0;
  stopped = false;
  private handlers: EventHandler<Obj>[] = [];
  private synced = false;
  private waiters: Array<() => void> = [];

  addEventHandler(h: EventHandler<Obj>): void {
    this.handlers.push(h);
  }
  addIndexer(): void {}
  byIndex(): Obj[] {
    return [];
  }
  hasSynced(): boolean {
    return this.synced;
  }
  waitForSync(signal?: AbortSignal): Promise<void> {
    if (this.synced) return Promise.resolve();
    return new Promise((resolve, reject) => {
      signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
      this.waiters.push(resolve);
    });
  }
  lastSyncResourceVersion(): string {
    return '';
  }
  run(signal: AbortSignal): Promise<void> {
    this.starts++;
    return new Promise((resolve) =>
      signal.addEventListener(
        'abort',
        () => {
          this.stopped = true;
          resolve();
        },
        { once: true },
      ),
    );
  }
  sync(): void {
    this.synced = true;
    for (const w of this.waiters.splice(0)) w();
  }
  emit(name: string): void {
    for (const h of this.handlers) h.onAdd?.({ metadata: { name } });
  }
}

type Outcome = () => Promise<ReconcileResult | void>;

function setup(
  outcomes: Record<string, Outcome[]> = {},
  o: { workers?: number; metrics?: MetricsRegistry; cacheSyncTimeoutMs?: number } = {},
) {
  const clock = new FakeClock();
  const inf = new FakeInformer();
  const calls: string[] = [];
  const c = newController<string>({
    name: 'test',
    sources: [watch(inf, (q) => ({ onAdd: (x) => q.add(x.metadata.name) }))],
    reconcile: (key) => {
      calls.push(key);
      const next = outcomes[key]?.shift();
      return next ? next() : Promise.resolve();
    },
    clock,
    rateLimit: { initialMs: 5, capMs: 1000 },
    workers: o.workers ?? 2,
    metrics: o.metrics,
    cacheSyncTimeoutMs: o.cacheSyncTimeoutMs,
  });
  const stop = new AbortController();
  return { clock, inf, calls, c, stop };
}

const count = (calls: string[], k: string): number => calls.filter((c) => c === k).length;

describe('newController', () => {
  it('starts its informers, reconciles nothing before their caches synced, then everything queued', async () => {
    const { inf, calls, c, stop } = setup();
    const running = c.run(stop.signal);
    inf.emit('a');
    await flushMicrotasks();
    expect(inf.starts).toBe(1);
    expect(calls).toEqual([]);
    inf.sync();
    await flushMicrotasks();
    expect(calls).toEqual(['a']);
    stop.abort();
    await running;
    expect(inf.stopped).toBe(true);
  });

  it('refuses to start twice', async () => {
    const { inf, c, stop } = setup();
    inf.sync();
    const running = c.run(stop.signal);
    await expect(c.run(stop.signal)).rejects.toThrow(/already started/);
    stop.abort();
    await running;
  });

  it('starts an informer shared by two controllers once', async () => {
    const inf = new FakeInformer();
    const mk = (name: string) =>
      newController<string>({ name, sources: [reads(inf)], reconcile: async () => undefined });
    const stop = new AbortController();
    const runs = [mk('one').run(stop.signal), mk('two').run(stop.signal)];
    inf.sync();
    await flushMicrotasks();
    expect(inf.starts).toBe(1);
    stop.abort();
    await Promise.all(runs);
  });

  it('fails with CacheSyncTimeoutError when the caches do not sync in time', async () => {
    const { clock, c, stop, calls, inf } = setup({}, { cacheSyncTimeoutMs: 1000 });
    const running = c.run(stop.signal);
    const outcome = running.then(
      () => 'resolved',
      (e: unknown) => e,
    );
    inf.emit('a');
    await clock.advance(999);
    expect(await Promise.race([outcome, flushMicrotasks().then(() => 'pending')])).toBe('pending');
    await clock.advance(1);
    expect(await outcome).toBeInstanceOf(CacheSyncTimeoutError);
    expect(calls).toEqual([]);
    stop.abort();
  });

  it('aborted before the caches synced, resolves without reconciling', async () => {
    const { c, stop, calls, inf } = setup();
    const running = c.run(stop.signal);
    inf.emit('a');
    await flushMicrotasks();
    stop.abort();
    await expect(running).resolves.toBeUndefined();
    expect(calls).toEqual([]);
  });

  it('maps outcomes: retryable error → rate-limited requeue, non-retryable → dropped, requeueAfter → delayed add, success → forget', async () => {
    const { clock, inf, calls, c, stop } = setup({
      conflict: [() => Promise.reject(new ConflictError('lost a race')), () => Promise.resolve()],
      unknown: [() => Promise.reject(new Error('boom')), () => Promise.resolve()],
      invalid: [() => Promise.reject(new InvalidError('spec.x: bad'))],
      gone: [() => Promise.reject(new NotFoundError('gone'))],
      later: [() => Promise.resolve({ requeueAfterMs: 1000 }), () => Promise.resolve()],
    });
    inf.sync();
    const running = c.run(stop.signal);
    for (const k of ['conflict', 'unknown', 'invalid', 'gone', 'later', 'ok']) inf.emit(k);
    await flushMicrotasks();
    expect([...calls].sort()).toEqual(['conflict', 'gone', 'invalid', 'later', 'ok', 'unknown']);
    // Two rate-limited retries at 5 ms (first failure each) and one delayed add at 1 s.
    expect(clock.deadlines().map((d) => d - clock.now())).toEqual([5, 5, 1000]);
    await clock.advance(5);
    expect(count(calls, 'conflict')).toBe(2);
    expect(count(calls, 'unknown')).toBe(2);
    await clock.advance(995);
    expect(count(calls, 'later')).toBe(2);
    await clock.advance(60_000);
    expect(count(calls, 'invalid')).toBe(1);
    expect(count(calls, 'gone')).toBe(1);
    expect(count(calls, 'ok')).toBe(1);
    expect(clock.pending()).toBe(0);
    stop.abort();
    await running;
  });

  it('backs a failing key off exponentially and resets the backoff after a success', async () => {
    const fail = (): Promise<void> => Promise.reject(new Error('boom'));
    const { clock, inf, calls, c, stop } = setup({ k: [fail, fail, fail, () => Promise.resolve(), fail] });
    inf.sync();
    const running = c.run(stop.signal);
    inf.emit('k');
    await flushMicrotasks();
    const delays: number[] = [];
    for (let i = 0; i < 3; i++) {
      const d = clock.deadlines()[0]! - clock.now();
      delays.push(d);
      await clock.advance(d);
    }
    expect(delays).toEqual([5, 10, 20]);
    expect(count(calls, 'k')).toBe(4); // the fourth attempt succeeded
    inf.emit('k');
    await flushMicrotasks();
    expect(clock.deadlines().map((d) => d - clock.now())).toEqual([5]); // forgotten: starts over
    stop.abort();
    await running;
  });

  it('never reconciles one key on two workers at once', async () => {
    const gates: Array<() => void> = [];
    let active = 0;
    let maxActive = 0;
    const inf = new FakeInformer();
    const c = newController<string>({
      name: 'exclusive',
      workers: 4,
      sources: [watch(inf, (q) => ({ onAdd: (x) => q.add(x.metadata.name) }))],
      reconcile: async () => {
        maxActive = Math.max(maxActive, ++active);
        await new Promise<void>((r) => gates.push(r));
        active--;
      },
    });
    const stop = new AbortController();
    inf.sync();
    const running = c.run(stop.signal);
    inf.emit('same');
    await flushMicrotasks();
    inf.emit('same');
    inf.emit('same');
    await flushMicrotasks();
    expect(gates).toHaveLength(1);
    gates.shift()?.();
    await flushMicrotasks();
    expect(gates).toHaveLength(1); // the re-adds ran once, after the first finished
    gates.shift()?.();
    await flushMicrotasks();
    expect(maxActive).toBe(1);
    stop.abort();
    await running;
  });

  it('shutdown waits for the reconciles in flight and aborts their signal', async () => {
    let release: () => void = () => undefined;
    let seen: AbortSignal | undefined;
    const inf = new FakeInformer();
    const c = newController<string>({
      name: 'drain',
      sources: [watch(inf, (q) => ({ onAdd: (x) => q.add(x.metadata.name) }))],
      reconcile: async (_k, signal) => {
        seen = signal;
        await new Promise<void>((r) => (release = r));
      },
    });
    const stop = new AbortController();
    inf.sync();
    let done = false;
    const running = c.run(stop.signal).then(() => (done = true));
    inf.emit('a');
    await flushMicrotasks();
    stop.abort();
    await flushMicrotasks();
    expect(seen?.aborted).toBe(true);
    expect(done).toBe(false);
    release();
    await running;
    expect(done).toBe(true);
  });

  it('every() re-enqueues on the clock while running', async () => {
    const clock = new FakeClock();
    const calls: string[] = [];
    const c = newController<string>({
      name: 'tick',
      clock,
      sources: [every(1000, (q) => q.add('tick'), clock)],
      reconcile: async (k) => void calls.push(k),
    });
    const stop = new AbortController();
    const running = c.run(stop.signal);
    await clock.advance(1000);
    await clock.advance(1000);
    expect(calls).toEqual(['tick', 'tick']);
    stop.abort();
    await running;
    expect(clock.pending()).toBe(0);
  });

  it('records queue and reconcile metrics under client-go and controller-runtime names', async () => {
    const metrics = new MetricsRegistry();
    let release: () => void = () => undefined;
    const { clock, inf, c, stop } = setup(
      {
        slow: [() => new Promise<void>((r) => (release = r))],
        bad: [() => Promise.reject(new Error('boom')), () => Promise.reject(new InvalidError('bad'))],
        later: [() => Promise.resolve({ requeueAfterMs: 60_000 })],
      },
      { metrics, workers: 4 },
    );
    inf.sync();
    const running = c.run(stop.signal);
    inf.emit('slow');
    inf.emit('bad');
    inf.emit('later');
    await flushMicrotasks();
    await clock.advance(5); // bad's retry
    await clock.advance(2000);
    const text = metrics.render();
    expect(text).toContain('workqueue_adds_total{name="test"} 4');
    expect(text).toContain('workqueue_retries_total{name="test"} 1');
    expect(text).toContain('workqueue_depth{name="test"} 0');
    expect(text).toContain('workqueue_longest_running_processor_seconds{name="test"} 2.005');
    expect(text).toContain('workqueue_unfinished_work_seconds{name="test"} 2.005');
    expect(text).toContain('workqueue_queue_duration_seconds_count{name="test"} 4');
    expect(text).toContain('workqueue_work_duration_seconds_count{name="test"} 3');
    expect(text).toContain('controller_runtime_reconcile_total{controller="test",result="error"} 2');
    expect(text).toContain('controller_runtime_reconcile_total{controller="test",result="requeue_after"} 1');
    expect(text).toContain('controller_runtime_reconcile_errors_total{controller="test"} 2');
    expect(text).toContain('controller_runtime_terminal_reconcile_errors_total{controller="test"} 1');
    expect(text).toContain('controller_runtime_reconcile_time_seconds_count{controller="test"} 3');
    release();
    await flushMicrotasks();
    expect(metrics.render()).toContain('controller_runtime_reconcile_total{controller="test",result="success"} 1');
    stop.abort();
    await running;
    expect(metrics.render()).not.toContain('workqueue_depth{name="test"}');
  });
});
