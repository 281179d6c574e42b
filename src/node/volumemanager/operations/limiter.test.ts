import { describe, expect, it } from 'vitest';
import { flushMicrotasks } from '../../../client/fake-clock.test-kit.js';
import { PriorityLimiter } from './limiter.js';

describe('PriorityLimiter', () => {
  it('runs at most max at once, then by priority and arrival', async () => {
    const l = new PriorityLimiter(1);
    const order: string[] = [];
    let release!: () => void;
    const first = l.run(5, () => new Promise<void>((r) => (release = r)).then(() => void order.push('first')));
    const done = [
      l.run(2, async () => void order.push('stage-a')),
      l.run(2, async () => void order.push('stage-b')),
      l.run(0, async () => void order.push('publish')),
    ];
    await flushMicrotasks();
    expect(order).toEqual([]);
    release();
    await Promise.all([first, ...done]);
    expect(order).toEqual(['first', 'publish', 'stage-a', 'stage-b']);
  });

  it('an aborted waiter leaves the queue', async () => {
    const l = new PriorityLimiter(1);
    let release!: () => void;
    const first = l.run(0, () => new Promise<void>((r) => (release = r)));
    const ac = new AbortController();
    const waiter = l.run(0, async () => 'ran', ac.signal);
    ac.abort(new Error('stop'));
    await expect(waiter).rejects.toThrow('stop');
    release();
    await first;
    expect(await l.run(0, async () => 'next')).toBe('next');
  });
});
