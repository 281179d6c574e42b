import { describe, expect, it } from 'vitest';
import { FakeClock, flushMicrotasks } from './fake-clock.test-kit.js';
import { newWorkQueue, rateLimitDelay, type GetResult } from './workqueue.js';

const setup = (): { clock: FakeClock; q: ReturnType<typeof newWorkQueue<string>> } => {
  const clock = new FakeClock();
  return { clock, q: newWorkQueue<string>({ clock, rateLimit: { initialMs: 5, capMs: 1000 } }) };
};

async function got(q: { get(): Promise<GetResult<string>> }): Promise<string | undefined> {
  return (await q.get()).key;
}

describe('work queue', () => {
  it('dedupes an item added twice while queued', async () => {
    const { q } = setup();
    q.add('a');
    q.add('b');
    q.add('a');
    expect(q.len()).toBe(2);
    expect(await got(q)).toBe('a');
    expect(await got(q)).toBe('b');
    expect(q.len()).toBe(0);
  });

  it('hands items out in arrival order across many adds and takes (a long queue stays first-in first-out)', async () => {
    const { q } = setup();
    const out: string[] = [];
    for (let i = 0; i < 5000; i++) q.add(`k${i}`);
    for (let i = 0; i < 3000; i++) out.push((await got(q))!);
    for (let i = 5000; i < 7000; i++) q.add(`k${i}`);
    expect(q.len()).toBe(4000);
    while (q.len() > 0) out.push((await got(q))!);
    expect(out).toEqual(Array.from({ length: 7000 }, (_, i) => `k${i}`));
  });

  it('never hands out an item being processed; re-add while processing queues it after done', async () => {
    const { q } = setup();
    q.add('a');
    expect(await got(q)).toBe('a');
    q.add('a'); // while processing
    expect(q.len()).toBe(0);
    let second: string | undefined;
    void q.get().then((r) => (second = r.key));
    await flushMicrotasks();
    expect(second).toBeUndefined();
    q.add('a'); // still deduped against the dirty mark
    q.done('a');
    await flushMicrotasks();
    expect(second).toBe('a');
    q.done('a');
    expect(q.len()).toBe(0);
  });

  it('wakes a waiting worker when an item arrives', async () => {
    const { q } = setup();
    const p = q.get();
    q.add('x');
    expect(await p).toEqual({ key: 'x', shutdown: false });
  });

  it('addRateLimited doubles per item up to the cap; forget resets', async () => {
    const { clock, q } = setup();
    const delays: number[] = [];
    for (let i = 0; i < 10; i++) {
      const before = clock.now();
      q.addRateLimited('k');
      expect(q.numRequeues('k')).toBe(i + 1);
      expect(q.len()).toBe(0);
      const [deadline] = clock.deadlines();
      delays.push((deadline ?? NaN) - before);
      await clock.advance((deadline ?? 0) - before - 1);
      expect(q.len()).toBe(0);
      await clock.advance(1);
      expect(q.len()).toBe(1);
      expect(await got(q)).toBe('k');
      q.done('k');
    }
    expect(delays).toEqual([5, 10, 20, 40, 80, 160, 320, 640, 1000, 1000]);
    q.forget('k');
    expect(q.numRequeues('k')).toBe(0);
    q.addRateLimited('k');
    expect(clock.deadlines()[0]! - clock.now()).toBe(5);
  });

  it('backoff is per item', () => {
    const { clock, q } = setup();
    q.addRateLimited('a');
    q.addRateLimited('a');
    q.addRateLimited('b');
    expect(q.numRequeues('a')).toBe(2);
    expect(q.numRequeues('b')).toBe(1);
    expect(clock.deadlines().map((d) => d - clock.now())).toEqual([5, 5]); // 'a' keeps its earlier deadline
  });

  it('addAfter keeps the earliest deadline and delivers once', async () => {
    const { clock, q } = setup();
    q.addAfter('a', 100);
    q.addAfter('a', 50);
    q.addAfter('a', 200);
    await clock.advance(50);
    expect(q.len()).toBe(1);
    await clock.advance(500);
    expect(q.len()).toBe(1);
  });

  it('addAfter with a non-positive delay adds at once', () => {
    const { q } = setup();
    q.addAfter('a', 0);
    expect(q.len()).toBe(1);
  });

  it('shutDown releases waiting workers, ignores adds, cancels delayed adds, and still hands out queued items', async () => {
    const { clock, q } = setup();
    const waiting = q.get();
    q.shutDown();
    expect(await waiting).toEqual({ key: undefined, shutdown: true });

    const { clock: c2, q: q2 } = setup();
    q2.add('a');
    q2.addAfter('b', 10);
    q2.shutDown();
    q2.add('c');
    await c2.advance(100);
    expect(q2.shuttingDown()).toBe(true);
    expect(await q2.get()).toEqual({ key: 'a', shutdown: false });
    expect(await q2.get()).toEqual({ key: undefined, shutdown: true });
    expect(c2.pending()).toBe(0);
    expect(clock.pending()).toBe(0);
  });

  it('shutDownWithDrain waits for items being processed', async () => {
    const { q } = setup();
    q.add('a');
    await got(q);
    let drained = false;
    void q.shutDownWithDrain().then(() => (drained = true));
    await flushMicrotasks();
    expect(drained).toBe(false);
    q.done('a');
    await flushMicrotasks();
    expect(drained).toBe(true);
  });
});

describe('rateLimitDelay', () => {
  it.each([
    { failures: 0, want: 5 },
    { failures: 1, want: 10 },
    { failures: 12, want: 20_480 },
    { failures: 13, want: 30_000 },
    { failures: 5000, want: 30_000 },
  ])('failures=$failures → $want ms with the default policy', ({ failures, want }) => {
    expect(rateLimitDelay({ initialMs: 5, capMs: 30_000 }, failures)).toBe(want);
  });
});
