import { describe, expect, it } from 'vitest';
import { decide, leaseExpiry, microTime, nextLeaseSpec } from './leaderelection.js';

const T = Date.parse('2026-01-01T00:00:00Z');
const lease = (holder: string | undefined, renewedSecondsAgo: number, duration = 15, transitions = 3) => ({
  holderIdentity: holder,
  leaseDurationSeconds: duration,
  renewTime: microTime(T - renewedSecondsAgo * 1000),
  acquireTime: microTime(T - 100_000),
  leaseTransitions: transitions,
});

describe('decide', () => {
  it.each([
    { name: 'no lease → create', spec: undefined, want: { action: 'create' } },
    { name: 'held by me → renew', spec: lease('me', 5), want: { action: 'renew' } },
    { name: 'held by me even if expired → renew', spec: lease('me', 60), want: { action: 'renew' } },
    { name: 'held by other, fresh → wait', spec: lease('other', 5), want: { action: 'wait', holder: 'other', expiresAtMs: T + 10_000 } },
    { name: 'held by other, exactly at expiry → wait', spec: lease('other', 15), want: { action: 'wait', holder: 'other', expiresAtMs: T } },
    { name: 'held by other, expired → acquire with a transition', spec: lease('other', 16), want: { action: 'acquire', transitions: 4 } },
    { name: 'released (no holder) → acquire', spec: lease('', 0, 1), want: { action: 'acquire', transitions: 4 } },
    { name: 'holder unset → acquire', spec: lease(undefined, 0), want: { action: 'acquire', transitions: 4 } },
    { name: 'never renewed → acquire', spec: { holderIdentity: 'other', leaseDurationSeconds: 15 }, want: { action: 'acquire', transitions: 1 } },
  ])('$name', ({ spec, want }) => {
    expect(decide(spec, T, 'me')).toEqual(want);
  });
});

describe('nextLeaseSpec', () => {
  it('create: holder me, zero transitions, acquire = renew = now', () => {
    expect(nextLeaseSpec({ action: 'create' }, undefined, 'me', T, 15)).toEqual({
      holderIdentity: 'me',
      leaseDurationSeconds: 15,
      acquireTime: '2026-01-01T00:00:00.000000Z',
      renewTime: '2026-01-01T00:00:00.000000Z',
      leaseTransitions: 0,
    });
  });
  it('renew keeps acquireTime and transitions, moves renewTime', () => {
    const prev = lease('me', 5);
    const next = nextLeaseSpec({ action: 'renew' }, prev, 'me', T, 15);
    expect(next.acquireTime).toBe(prev.acquireTime);
    expect(next.leaseTransitions).toBe(3);
    expect(next.renewTime).toBe(microTime(T));
  });
  it('acquire takes the new transition count', () => {
    expect(nextLeaseSpec({ action: 'acquire', transitions: 4 }, lease('other', 99), 'me', T, 15)).toMatchObject({
      holderIdentity: 'me',
      leaseTransitions: 4,
      acquireTime: microTime(T),
    });
  });
  it('the lease expires renewTime + duration later', () => {
    expect(leaseExpiry(nextLeaseSpec({ action: 'create' }, undefined, 'me', T, 15))).toBe(T + 15_000);
  });
});
