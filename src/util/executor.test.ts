import { describe, it, expect } from 'vitest';
import { FakeClock, flushMicrotasks } from '../client/fake-clock.test-kit.js';
import type { Logger } from './log.js';
import { newOperationExecutor, type ExecutorChange, type OpKey } from './executor.js';

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => quiet };
const policy = { initialMs: 500, factor: 2, capMs: 4_000 };
const newExecutor = (clock = new FakeClock()) => newOperationExecutor({ backoff: policy, clock, log: quiet });

function deferred(): { promise: Promise<void>; resolve: () => void; reject: (e: Error) => void } {
  let resolve!: () => void;
  let reject!: (e: Error) => void;
  const promise = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

const fail = async (): Promise<void> => {
  throw new Error('boom');
};
const ok = async (): Promise<void> => undefined;

describe('operation executor: conflicts', () => {
  it.each<{ name: string; first: OpKey; second: OpKey; want: string }>([
    {
      name: 'volume op blocks pod op on it',
      first: { volume: 'v1' },
      second: { volume: 'v1', pod: 'p1' },
      want: 'alreadyRunning',
    },
    {
      name: 'pod op blocks volume op',
      first: { volume: 'v1', pod: 'p1' },
      second: { volume: 'v1' },
      want: 'alreadyRunning',
    },
    {
      name: 'same pod op duplicate',
      first: { volume: 'v1', pod: 'p1' },
      second: { volume: 'v1', pod: 'p1' },
      want: 'alreadyRunning',
    },
    {
      name: 'other pod on same volume runs',
      first: { volume: 'v1', pod: 'p1' },
      second: { volume: 'v1', pod: 'p2' },
      want: 'started',
    },
    { name: 'other volume runs', first: { volume: 'v1' }, second: { volume: 'v2' }, want: 'started' },
    {
      name: 'a plain key is the whole volume: blocks a pod op',
      first: 'v1',
      second: { volume: 'v1', pod: 'p1' },
      want: 'alreadyRunning',
    },
    { name: 'a pod op blocks the plain key', first: { volume: 'v1', pod: 'p1' }, second: 'v1', want: 'alreadyRunning' },
    { name: 'plain key and volume key are one key', first: 'v1', second: { volume: 'v1' }, want: 'alreadyRunning' },
    { name: 'other plain key runs', first: '/a', second: '/b', want: 'started' },
  ])('$name', async ({ first, second, want }) => {
    const ex = newExecutor();
    const d = deferred();
    expect(ex.run(first, 'a', () => d.promise)).toBe('started');
    expect(ex.isPending(first)).toBe(true);
    expect(ex.isPending(second)).toBe(want === 'alreadyRunning');
    expect(ex.run(second, 'b', ok)).toBe(want);
    d.resolve();
    await ex.idle();
    expect(ex.isPending(first)).toBe(false);
    expect(ex.isPending(second)).toBe(false);
  });

  it('a busy key refuses every operation name; once it settles the key runs again', async () => {
    const ex = newExecutor();
    const d = deferred();
    expect(ex.run('/a', 'register', () => d.promise)).toBe('started');
    expect(ex.run('/a', 'register', ok)).toBe('alreadyRunning');
    expect(ex.run('/a', 'unregister', ok)).toBe('alreadyRunning');
    d.resolve();
    await ex.idle();
    expect(ex.run('/a', 'register', ok)).toBe('started');
    await ex.idle();
  });
});

describe('operation executor: backoff', () => {
  it.each<{ name: string; key: OpKey }>([
    { name: 'plain key', key: '/a' },
    { name: 'pod key', key: { volume: 'v1', pod: 'p1' } },
  ])('backs off 500 ms doubling to the cap ($name); other keys are unaffected', async ({ key }) => {
    const clock = new FakeClock();
    const ex = newExecutor(clock);
    expect(ex.run(key, 'setUp', fail)).toBe('started');
    await ex.idle();
    expect(ex.failures(key)).toBe(1);
    const waits: number[] = [];
    for (let i = 0; i < 5; i++) {
      const start = clock.now();
      // The first instant (in 100 ms steps) at which a retry is accepted; each retry fails again.
      while (ex.run(key, 'setUp', fail) === 'backingOff') await clock.advance(100);
      waits.push(clock.now() - start);
      await ex.idle();
      expect(ex.failures(key)).toBe(i + 2);
    }
    expect(waits).toEqual([500, 1000, 2000, 4000, 4000]);
    expect(ex.run({ volume: 'v1', pod: 'p2' }, 'setUp', ok)).toBe('started');
    expect(ex.run('/b', 'setUp', ok)).toBe('started');
    await ex.idle();
  });

  it('a pod key in backoff does not hold back the whole volume, and the other way round', async () => {
    const clock = new FakeClock();
    const ex = newExecutor(clock);
    ex.run({ volume: 'v1', pod: 'p1' }, 'setUp', fail);
    await ex.idle();
    expect(ex.run({ volume: 'v1', pod: 'p1' }, 'setUp', ok)).toBe('backingOff');
    expect(ex.run({ volume: 'v1' }, 'unmountDevice', fail)).toBe('started');
    await ex.idle();
    expect(ex.run({ volume: 'v1' }, 'unmountDevice', ok)).toBe('backingOff');
    expect(ex.run({ volume: 'v1', pod: 'p2' }, 'setUp', ok)).toBe('started');
    await ex.idle();
  });

  it('a success resets the backoff and forgets the key', async () => {
    const clock = new FakeClock();
    const ex = newExecutor(clock);
    ex.run('/a', 'register', fail);
    await ex.idle();
    await clock.advance(500);
    ex.run('/a', 'register', ok);
    await ex.idle();
    expect(ex.failures('/a')).toBe(0);
    ex.run('/a', 'register', fail);
    await ex.idle();
    expect(ex.failures('/a')).toBe(1);
    expect(ex.run('/a', 'register', ok)).toBe('backingOff');
    await clock.advance(499);
    expect(ex.run('/a', 'register', ok)).toBe('backingOff');
    await clock.advance(1);
    expect(ex.run('/a', 'register', ok)).toBe('started');
    await ex.idle();
  });

  it('a different operation name resets the backoff: it is another operation, not a retry', async () => {
    const clock = new FakeClock();
    const ex = newExecutor(clock);
    const key = { volume: 'v1' };
    ex.run(key, 'mountDevice', fail);
    await ex.idle();
    await clock.advance(500);
    ex.run(key, 'mountDevice', fail);
    await ex.idle();
    expect(ex.failures(key)).toBe(2);
    expect(ex.run(key, 'mountDevice', ok)).toBe('backingOff');
    // The new name starts at once, and its own failure counts from one (500 ms, not 2 s).
    expect(ex.run(key, 'unmountDevice', fail)).toBe('started');
    await ex.idle();
    expect(ex.failures(key)).toBe(1);
    await clock.advance(499);
    expect(ex.run(key, 'unmountDevice', ok)).toBe('backingOff');
    await clock.advance(1);
    expect(ex.run(key, 'unmountDevice', ok)).toBe('started');
    await ex.idle();
    expect(ex.failures(key)).toBe(0);
    expect(ex.run(key, 'mountDevice', ok)).toBe('started');
    await ex.idle();
  });
});

describe('operation executor: listeners, idle and close', () => {
  it('tells listeners when an operation settles (with its error) and when a backoff expires', async () => {
    const clock = new FakeClock();
    const ex = newExecutor(clock);
    const seen: ExecutorChange[] = [];
    ex.onChange((c) => seen.push(c));
    ex.run({ volume: 'v1', pod: 'p1' }, 'setUp', fail);
    await ex.idle();
    await flushMicrotasks();
    expect(seen).toEqual([
      {
        kind: 'settled',
        key: { volume: 'v1', pod: 'p1' },
        name: 'setUp',
        error: expect.objectContaining({ message: 'boom' }),
      },
    ]);
    await clock.advance(499);
    expect(seen).toHaveLength(1);
    await clock.advance(1);
    expect(seen[1]).toEqual({ kind: 'retryDue', key: { volume: 'v1', pod: 'p1' }, name: 'setUp' });
    ex.run('/a', 'register', ok);
    await ex.idle();
    expect(seen[2]).toEqual({ kind: 'settled', key: '/a', name: 'register' });
    expect(seen).toHaveLength(3);
  });

  it('an unsubscribed listener hears nothing more', async () => {
    const ex = newExecutor();
    let calls = 0;
    const off = ex.onChange(() => calls++);
    ex.run('/a', 'x', ok);
    await ex.idle();
    off();
    ex.run('/a', 'x', ok);
    await ex.idle();
    expect(calls).toBe(1);
  });

  it('idle waits for operations started while it waits', async () => {
    const ex = newExecutor();
    const first = deferred();
    const second = deferred();
    let secondDone = false;
    ex.run('/a', 'x', () => first.promise);
    // A listener that starts the next operation as the first settles (as a reconciler would).
    ex.onChange((c) => {
      if (c.kind === 'settled' && c.key === '/a')
        ex.run('/b', 'y', async () => {
          await second.promise;
          secondDone = true;
        });
    });
    let idle = false;
    const waiting = ex.idle().then(() => (idle = true));
    first.resolve();
    await flushMicrotasks();
    expect(idle).toBe(false);
    second.resolve();
    await waiting;
    expect(secondDone).toBe(true);
  });

  it('close aborts pending operations, records no failure for them, and refuses new ones', async () => {
    const ex = newExecutor();
    const seen: Array<[string, string | undefined]> = [];
    ex.onChange((c) => c.kind === 'settled' && seen.push([c.name, c.error?.message]));
    let aborted = false;
    ex.run(
      '/a',
      'long',
      (signal) =>
        new Promise<void>((_, reject) =>
          signal.addEventListener('abort', () => {
            aborted = true;
            reject(new Error('aborted'));
          }),
        ),
    );
    await flushMicrotasks();
    await ex.close();
    expect(aborted).toBe(true);
    expect(seen).toEqual([['long', 'aborted']]);
    expect(ex.failures('/a')).toBe(0);
    expect(ex.run('/b', 'register', ok)).toBe('alreadyRunning');
    expect(ex.run({ volume: 'v2', pod: 'p1' }, 'x', ok)).toBe('alreadyRunning');
  });
});

describe('expected failures', () => {
  it('are logged at debug, other failures at warn; both back off', async () => {
    const lines: Array<[string, string]> = [];
    const log: Logger = {
      debug: (m) => lines.push(['debug', m]),
      info: (m) => lines.push(['info', m]),
      warn: (m) => lines.push(['warn', m]),
      error: (m) => lines.push(['error', m]),
      child: () => log,
    };
    const ex = newOperationExecutor({
      backoff: policy,
      clock: new FakeClock(),
      log,
      expected: (e) => e.message.startsWith('waiting'),
    });
    ex.run('/a', 'op', () => Promise.reject(new Error('waiting for a driver')));
    ex.run('/b', 'op', () => Promise.reject(new Error('boom')));
    await ex.idle();
    expect(lines).toEqual([
      ['debug', 'operation failed; will retry'],
      ['warn', 'operation failed; will retry'],
    ]);
    expect(ex.run('/a', 'op', () => Promise.resolve())).toBe('backingOff');
  });
});
