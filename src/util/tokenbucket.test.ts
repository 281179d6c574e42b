import { describe, expect, it } from 'vitest';
import { TokenBucket } from './tokenbucket.js';

describe('TokenBucket (flowcontrol semantics)', () => {
  it('starts with its burst, then refills at qps up to the burst', () => {
    const b = new TokenBucket(0.1, 1, 0);
    expect(b.tryAccept(0)).toBe(true);
    expect(b.tryAccept(0)).toBe(false);
    expect(b.readyAt(0)).toBe(10_000);
    expect(b.tryAccept(9_999)).toBe(false);
    expect(b.tryAccept(10_000)).toBe(true);
    // A long idle time leaves one token, not many: burst 1.
    expect(b.tryAccept(1_000_000)).toBe(true);
    expect(b.tryAccept(1_000_000)).toBe(false);
  });

  it('a rate of 0 never accepts (FakeNeverRateLimiter)', () => {
    const b = new TokenBucket(0, 1, 0);
    expect(b.tryAccept(0)).toBe(false);
    expect(b.readyAt(1e12)).toBeUndefined();
  });

  it('a token due at readyAt is there despite fractional refills', () => {
    const b = new TokenBucket(0.3, 1, 0);
    b.tryAccept(0);
    const at = b.readyAt(0)!;
    expect(b.tryAccept(at - 1)).toBe(false);
    expect(b.tryAccept(at)).toBe(true);
  });
});
