import { describe, it, expect } from 'vitest';
import { FakeClock, flushMicrotasks } from '../client/fake-clock.js';
import type { Logger } from './log.js';
import { newOperationExecutor } from './keyedoperations.js';

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => quiet };
const policy = { initialMs: 500, factor: 2, capMs: 4_000 };

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

describe('operation executor', () => {
  it('allows one operation per key; a second while pending is refused, other keys run', async () => {
    const ex = newOperationExecutor({ backoff: policy, clock: new FakeClock(), log: quiet });
    const d = deferred();
    expect(ex.run('/a', 'register', () => d.promise)).toBe('started');
    expect(ex.run('/a', 'register', ok)).toBe('alreadyRunning');
    expect(ex.run('/a', 'unregister', ok)).toBe('alreadyRunning');
    expect(ex.isPending('/a')).toBe(true);
    expect(ex.run('/b', 'register', ok)).toBe('started');
    d.resolve();
    await ex.idle();
    expect(ex.isPending('/a')).toBe(false);
    expect(ex.run('/a', 'register', ok)).toBe('started');
    await ex.idle();
  });

  it('backs off exponentially after failures, up to the cap', async () => {
    const clock = new FakeClock();
    const ex = newOperationExecutor({ backoff: policy, clock, log: quiet });
    expect(ex.run('/a', 'register', fail)).toBe('started');
    await ex.idle();
    const waits: number[] = [];
    for (let i = 0; i < 5; i++) {
      const start = clock.now();
      while (ex.run('/a', 'register', fail) === 'backingOff') await clock.advance(100);
      waits.push(clock.now() - start);
      await ex.idle();
      expect(ex.failures('/a')).toBe(i + 2);
    }
    expect(waits).toEqual([500, 1000, 2000, 4000, 4000]);
  });

  it('a success resets the backoff', async () => {
    const clock = new FakeClock();
    const ex = newOperationExecutor({ backoff: policy, clock, log: quiet });
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

  it('a different operation name is not held back by the previous one\'s backoff', async () => {
    const ex = newOperationExecutor({ backoff: policy, clock: new FakeClock(), log: quiet });
    ex.run('/a', 'register@1', fail);
    await ex.idle();
    expect(ex.run('/a', 'register@1', ok)).toBe('backingOff');
    expect(ex.run('/a', 'register@2', ok)).toBe('started');
    await ex.idle();
    expect(ex.failures('/a')).toBe(0);
  });

  it('tells listeners when an operation settles and when a backoff expires', async () => {
    const clock = new FakeClock();
    const ex = newOperationExecutor({ backoff: policy, clock, log: quiet });
    let calls = 0;
    ex.onChange(() => calls++);
    ex.run('/a', 'register', fail);
    await ex.idle();
    await flushMicrotasks();
    expect(calls).toBe(1);
    await clock.advance(499);
    expect(calls).toBe(1);
    await clock.advance(1);
    expect(calls).toBe(2);
  });

  it('close aborts pending operations and refuses new ones', async () => {
    const ex = newOperationExecutor({ backoff: policy, clock: new FakeClock(), log: quiet });
    let aborted = false;
    ex.run('/a', 'register', (signal) => new Promise<void>((_, reject) => signal.addEventListener('abort', () => {
      aborted = true;
      reject(signal.reason);
    })));
    await ex.close();
    expect(aborted).toBe(true);
    expect(ex.failures('/a')).toBe(0);
    expect(ex.run('/b', 'register', ok)).toBe('alreadyRunning');
  });
});
