import { afterEach, describe, expect, it, vi } from 'vitest';
import { backoffDelay, DEFAULT_BACKOFF, realClock } from './backoff.js';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('backoffDelay', () => {
  it('starts at the initial delay, doubles, and stops at the cap', () => {
    expect(backoffDelay(DEFAULT_BACKOFF, 0)).toBe(0);
    expect(backoffDelay(DEFAULT_BACKOFF, 1)).toBe(500);
    expect(backoffDelay(DEFAULT_BACKOFF, 2)).toBe(1000);
    expect(backoffDelay(DEFAULT_BACKOFF, 20)).toBe(DEFAULT_BACKOFF.capMs);
  });
});

describe('realClock.sleep', () => {
  it('resolves only once now() has reached the deadline, even when timers run ahead of the wall clock', async () => {
    // The wall clock lags the timer clock by 20 ms after the deadline is taken: a timer firing
    // "on time" is early by Date.now(), as Node's millisecond-rounded timers can be.
    const realNow = Date.now.bind(Date);
    const start = realNow();
    let calls = 0;
    vi.spyOn(Date, 'now').mockImplementation(() => (calls++ === 0 ? start : realNow() - 20));
    await realClock.sleep(30);
    expect(realClock.now()).toBeGreaterThanOrEqual(start + 30);
  });

  it('rejects with the signal reason when aborted, and at once when already aborted', async () => {
    const ac = new AbortController();
    const p = realClock.sleep(60_000, ac.signal);
    ac.abort(new Error('stop'));
    await expect(p).rejects.toThrow('stop');
    await expect(realClock.sleep(10, ac.signal)).rejects.toThrow('stop');
  });
});
