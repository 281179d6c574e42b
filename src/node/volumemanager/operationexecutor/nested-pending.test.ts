import { describe, expect, it } from 'vitest';
import { FakeClock, flushMicrotasks } from '../../../client/fake-clock.js';
import { newNestedPendingOperations, type OpKey } from './nested-pending.js';
import { podUid, volumeName } from '../types.js';

const V = volumeName('v1');
const W = volumeName('v2');
const P = podUid('p1');
const Q = podUid('p2');

function deferred(): { promise: Promise<void>; resolve: () => void; reject: (e: Error) => void } {
  let resolve!: () => void;
  let reject!: (e: Error) => void;
  const promise = new Promise<void>((a, b) => ((resolve = a), (reject = b)));
  return { promise, resolve, reject };
}

const policy = { initialMs: 500, factor: 2, capMs: 2000 };

describe('nested pending operations: conflicts', () => {
  it.each<{ name: string; first: OpKey; second: OpKey; want: string }>([
    { name: 'volume op blocks pod op on it', first: { volume: V }, second: { volume: V, pod: P }, want: 'alreadyExists' },
    { name: 'pod op blocks volume op', first: { volume: V, pod: P }, second: { volume: V }, want: 'alreadyExists' },
    { name: 'same pod op duplicate', first: { volume: V, pod: P }, second: { volume: V, pod: P }, want: 'alreadyExists' },
    { name: 'other pod on same volume runs', first: { volume: V, pod: P }, second: { volume: V, pod: Q }, want: 'started' },
    { name: 'other volume runs', first: { volume: V }, second: { volume: W }, want: 'started' },
  ])('$name', async ({ first, second, want }) => {
    const ops = newNestedPendingOperations({ backoff: policy, clock: new FakeClock() });
    const d = deferred();
    expect(ops.run(first, 'a', () => d.promise)).toBe('started');
    expect(ops.run(second, 'b', async () => undefined)).toBe(want);
    d.resolve();
    await ops.idle();
    expect(ops.isPending(first)).toBe(false);
  });
});

describe('nested pending operations: backoff', () => {
  it('backs off 500 ms doubling to the cap, per key; refusals are values', async () => {
    const clock = new FakeClock();
    const ops = newNestedPendingOperations({ backoff: policy, clock });
    const key = { volume: V, pod: P };
    const fail = async (): Promise<void> => {
      throw new Error('boom');
    };
    const delays: number[] = [];
    expect(ops.run(key, 'setUp', fail)).toBe('started');
    await ops.idle();
    for (let i = 0; i < 4; i++) {
      const t0 = clock.now();
      // The first instant (in 100 ms steps) at which a retry is accepted; each retry fails again.
      while (ops.run(key, 'setUp', fail) === 'backoff') await clock.advance(100);
      delays.push(clock.now() - t0);
      await ops.idle();
    }
    expect(delays).toEqual([500, 1000, 2000, 2000]);
    expect(ops.failures(key)).toBe(5);
    // another key is unaffected
    expect(ops.run({ volume: V, pod: Q }, 'setUp', async () => undefined)).toBe('started');
    await ops.idle();
  });

  it('a different operation name resets the backoff; success forgets the key', async () => {
    const clock = new FakeClock();
    const ops = newNestedPendingOperations({ backoff: policy, clock });
    const key = { volume: V };
    ops.run(key, 'mountDevice', async () => {
      throw new Error('x');
    });
    await ops.idle();
    expect(ops.run(key, 'mountDevice', async () => undefined)).toBe('backoff');
    expect(ops.run(key, 'unmountDevice', async () => undefined)).toBe('started');
    await ops.idle();
    expect(ops.failures(key)).toBe(0);
    expect(ops.run(key, 'mountDevice', async () => undefined)).toBe('started');
    await ops.idle();
  });

  it('reports settlement with the error, and close aborts running operations', async () => {
    const ops = newNestedPendingOperations({ backoff: policy, clock: new FakeClock() });
    const seen: Array<[string, string | undefined]> = [];
    ops.onSettled((_k, name, err) => seen.push([name, err?.message]));
    ops.run({ volume: V }, 'long', (signal) => new Promise<void>((_r, rej) => signal.addEventListener('abort', () => rej(new Error('aborted')))));
    await flushMicrotasks();
    await ops.close();
    expect(seen).toEqual([['long', 'aborted']]);
    expect(ops.run({ volume: W }, 'x', async () => undefined)).toBe('alreadyExists');
  });
});
