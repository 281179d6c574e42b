import { describe, expect, it } from 'vitest';
import { newBoundedRunner } from './background.js';

function deferred(): { promise: Promise<void>; resolve: () => void; reject: (e: Error) => void } {
  let resolve!: () => void;
  let reject!: (e: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('newBoundedRunner', () => {
  it('keeps at most `limit` tasks in flight and starts the next when one settles', async () => {
    const r = newBoundedRunner(2);
    const d = [deferred(), deferred(), deferred()];
    const started: number[] = [];
    await r.run(() => (started.push(0), d[0]!.promise));
    await r.run(() => (started.push(1), d[1]!.promise));
    const third = r.run(() => (started.push(2), d[2]!.promise));
    await Promise.resolve();
    expect(started).toEqual([0, 1]);
    expect(r.inFlight()).toBe(2);
    d[0]!.reject(new Error('a failure frees the slot too'));
    await third;
    expect(started).toEqual([0, 1, 2]);
    d[1]!.resolve();
    d[2]!.resolve();
    await r.idle();
    expect(r.inFlight()).toBe(0);
  });
});
