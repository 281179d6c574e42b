import { describe, expect, it } from 'vitest';
import { ZoneTaintQueue } from './taintqueue.js';

describe('ZoneTaintQueue (RateLimitedTimedQueue)', () => {
  it('hands out the first node at once (the bucket starts full), the next one token later, in the order added', () => {
    const q = new ZoneTaintQueue(0.1, 0);
    expect(q.add('a', 0)).toBe(true);
    expect(q.add('b', 0)).toBe(true);
    expect(q.take(0)).toEqual(['a']);
    expect(q.take(5_000)).toEqual([]);
    expect(q.nextAt(5_000)).toBe(10_000);
    expect(q.take(10_000)).toEqual(['b']);
    expect(q.nextAt(10_000)).toBeUndefined();
  });

  it('adds a node once until it is removed, even after it was handed out', () => {
    const q = new ZoneTaintQueue(100, 0);
    q.add('a', 0);
    expect(q.add('a', 0)).toBe(false);
    expect(q.take(0)).toEqual(['a']);
    expect(q.add('a', 1_000)).toBe(false);
    expect(q.remove('a')).toBe(true);
    expect(q.add('a', 1_000)).toBe(true);
  });

  it('a removed node is not handed out, and a retry after its removal does not bring it back', () => {
    const q = new ZoneTaintQueue(100, 0);
    q.add('a', 0);
    q.add('b', 0);
    q.remove('a');
    expect(q.take(0)).toEqual(['b']);
    q.remove('b');
    q.retry('b', 1);
    expect(q.take(1_000)).toEqual([]);
  });

  it('a failed taint is retried at the time given', () => {
    const q = new ZoneTaintQueue(1_000, 0);
    q.add('a', 0);
    expect(q.take(0)).toEqual(['a']);
    q.retry('a', 50);
    expect(q.take(10)).toEqual([]);
    expect(q.take(50)).toEqual(['a']);
  });

  it('a rate of 0 hands out nothing; swapping back to a rate starts drained (no extra taint), a rate change with a token left starts full', () => {
    const q = new ZoneTaintQueue(0.1, 0);
    q.add('a', 0);
    q.swapLimiter(0, 0);
    expect(q.take(1_000_000)).toEqual([]);
    expect(q.nextAt(1_000_000)).toBeUndefined();
    q.swapLimiter(0.1, 1_000_000);
    expect(q.take(1_000_000)).toEqual([]);
    expect(q.take(1_010_000)).toEqual(['a']);

    const full = new ZoneTaintQueue(0.1, 0);
    full.swapLimiter(0.01, 0);
    full.add('b', 0);
    expect(full.take(0)).toEqual(['b']);
    expect(full.qps).toBe(0.01);
  });
});
