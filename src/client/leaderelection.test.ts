import type { Lease, LeaseSpec } from 'kubernetes-types/coordination/v1.js';
import { describe, expect, it } from 'vitest';
import { AlreadyExistsError, ConflictError, UnavailableError } from '../util/errors.js';
import { FakeClock, flushMicrotasks } from './fake-clock.test-kit.js';
import {
  LeaderElector,
  NotLeaderError,
  decide,
  microTime,
  nextLeaseSpec,
  timingsError,
  type LeaseLock,
} from './leaderelection.js';

const T = Date.parse('2026-01-01T00:00:00Z');
const lease = (holder: string | undefined, renewedSecondsAgo: number, duration = 15, transitions = 3) => ({
  holderIdentity: holder,
  leaseDurationSeconds: duration,
  renewTime: microTime(T - renewedSecondsAgo * 1000),
  acquireTime: microTime(T - 100_000),
  leaseTransitions: transitions,
});

describe('decide', () => {
  // observedAt: when this candidate first read the current record, on its own clock.
  it.each([
    { name: 'no lease → create', spec: undefined, observedAgo: 0, want: { action: 'create' } },
    { name: 'held by me → renew', spec: lease('me', 5), observedAgo: 5, want: { action: 'renew' } },
    { name: 'held by me even if expired → renew', spec: lease('me', 60), observedAgo: 60, want: { action: 'renew' } },
    {
      name: 'held by other, observed 5 s ago → wait',
      spec: lease('other', 5),
      observedAgo: 5,
      want: { action: 'wait', holder: 'other', expiresAtMs: T + 10_000 },
    },
    {
      name: 'held by other, unchanged for the lease duration → acquire',
      spec: lease('other', 15),
      observedAgo: 15,
      want: { action: 'acquire', transitions: 4 },
    },
    {
      name: 'held by other, unchanged for longer → acquire with a transition',
      spec: lease('other', 16),
      observedAgo: 16,
      want: { action: 'acquire', transitions: 4 },
    },
    {
      name: "a renewTime long past on the holder's clock does not count: just observed → wait",
      spec: lease('other', 3600),
      observedAgo: 0,
      want: { action: 'wait', holder: 'other', expiresAtMs: T + 15_000 },
    },
    {
      name: "a renewTime in the future on the holder's clock does not count either",
      spec: lease('other', -3600),
      observedAgo: 20,
      want: { action: 'acquire', transitions: 4 },
    },
    {
      name: 'released (no holder) → acquire',
      spec: lease('', 0, 1),
      observedAgo: 0,
      want: { action: 'acquire', transitions: 4 },
    },
    {
      name: 'holder unset → acquire',
      spec: lease(undefined, 0),
      observedAgo: 0,
      want: { action: 'acquire', transitions: 4 },
    },
    {
      name: 'no duration → acquire',
      spec: { holderIdentity: 'other' },
      observedAgo: 0,
      want: { action: 'acquire', transitions: 1 },
    },
  ])('$name', ({ spec, observedAgo, want }) => {
    expect(decide(spec, T - observedAgo * 1000, T, 'me')).toEqual(want);
  });
});

describe('timingsError (client-go NewLeaderElector checks)', () => {
  it.each([
    { t: { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 }, want: undefined },
    { t: { leaseDurationMs: 3_000, renewDeadlineMs: 2_000, retryPeriodMs: 500 }, want: undefined },
    {
      t: { leaseDurationMs: 10_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 },
      want: 'leaseDuration must be greater than renewDeadline',
    },
    {
      t: { leaseDurationMs: 15_000, renewDeadlineMs: 2_400, retryPeriodMs: 2_000 },
      want: 'renewDeadline must be greater than retryPeriod*JitterFactor',
    },
    {
      t: { leaseDurationMs: 0, renewDeadlineMs: 0, retryPeriodMs: 0 },
      want: 'leaseDuration must be greater than zero',
    },
    {
      t: { leaseDurationMs: 2_500, renewDeadlineMs: 2_000, retryPeriodMs: 500 },
      want: 'leaseDuration must be a whole number of seconds (Lease.spec.leaseDurationSeconds)',
    },
  ])('$t → $want', ({ t, want }) => expect(timingsError(t)).toBe(want));
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
});

describe('LeaderElector loop (fake clock, in-memory lease)', () => {
  class MemoryLock implements LeaseLock {
    lease: Lease | undefined;
    rv = 0;
    failWrites = false;
    writes: LeaseSpec[] = [];
    get(): Promise<Lease | undefined> {
      return Promise.resolve(this.lease && structuredClone(this.lease));
    }
    create(spec: LeaseSpec): Promise<void> {
      if (this.failWrites) return Promise.reject(new UnavailableError('down'));
      if (this.lease) return Promise.reject(new AlreadyExistsError('exists'));
      this.lease = { metadata: { name: 'l', resourceVersion: String(++this.rv) }, spec };
      this.writes.push(spec);
      return Promise.resolve();
    }
    update(prev: Lease, spec: LeaseSpec): Promise<void> {
      if (this.failWrites) return Promise.reject(new UnavailableError('down'));
      if (prev.metadata?.resourceVersion !== this.lease?.metadata?.resourceVersion)
        return Promise.reject(new ConflictError('stale'));
      this.lease = { metadata: { name: 'l', resourceVersion: String(++this.rv) }, spec };
      this.writes.push(spec);
      return Promise.resolve();
    }
  }

  function start(lock: MemoryLock, clock: FakeClock, identity = 'me') {
    const state = { started: 0, stopped: 0, signal: undefined as AbortSignal | undefined, leaders: [] as string[] };
    const ctl = new AbortController();
    const elector = new LeaderElector({
      lock,
      identity,
      clock,
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
      onStartedLeading: (s) => {
        state.started++;
        state.signal = s;
      },
      onStoppedLeading: () => state.stopped++,
      onNewLeader: (id) => state.leaders.push(id),
    });
    let finished = false;
    const result = elector.run(ctl.signal);
    const done = result.then(() => (finished = true));
    return { state, elector, ctl, done, result, finished: () => finished };
  }

  it('creates the lease, leads, and renews every retry period', async () => {
    const clock = new FakeClock(T);
    const lock = new MemoryLock();
    const e = start(lock, clock);
    await flushMicrotasks();
    expect(e.state.started).toBe(1);
    expect(e.elector.isLeader()).toBe(true);
    expect(lock.lease?.spec).toMatchObject({ holderIdentity: 'me', leaseTransitions: 0, leaseDurationSeconds: 15 });
    await clock.advance(2_000);
    await clock.advance(2_000);
    expect(lock.writes.map((w) => w.renewTime)).toEqual([microTime(T), microTime(T + 2_000), microTime(T + 4_000)]);
    e.ctl.abort();
    await e.done;
  });

  it('loses leadership when renewals fail for the renew deadline', async () => {
    const clock = new FakeClock(T);
    const lock = new MemoryLock();
    const e = start(lock, clock);
    await flushMicrotasks();
    lock.failWrites = true;
    for (let i = 0; i < 4; i++) await clock.advance(2_000); // 8 s without a renewal: still leading
    expect(e.elector.isLeader()).toBe(true);
    expect(e.state.signal?.aborted).toBe(false);
    await clock.advance(2_000); // 10 s: deadline reached
    await e.done;
    expect(e.elector.isLeader()).toBe(false);
    expect(e.state.signal?.aborted).toBe(true);
    expect(e.state.stopped).toBe(1);
  });

  it('waits while another holder’s lease is fresh, takes over after it expires', async () => {
    const clock = new FakeClock(T);
    const lock = new MemoryLock();
    lock.lease = { metadata: { name: 'l', resourceVersion: '1' }, spec: lease('other', 0, 15, 2) };
    lock.rv = 1;
    const e = start(lock, clock);
    await flushMicrotasks();
    expect(e.state.leaders).toEqual(['other']);
    expect(e.state.started).toBe(0);
    for (let i = 0; i < 7; i++) await clock.advance(2_000); // t = 14 s
    expect(e.state.started).toBe(0);
    await clock.advance(2_000); // t = 16 s > renew + 15 s
    expect(e.state.started).toBe(1);
    expect(lock.lease?.spec).toMatchObject({ holderIdentity: 'me', leaseTransitions: 3 });
    e.ctl.abort();
    await e.done;
  });

  it('a leader paused past its renew deadline refuses effects on resume, before its loop runs, then ends as lost', async () => {
    const clock = new FakeClock(T);
    const lock = new MemoryLock();
    const e = start(lock, clock);
    await flushMicrotasks();
    expect(e.elector.holdsLease()).toBe(true);
    expect(() => e.elector.assertLeading()).not.toThrow();
    // Paused: another candidate takes the lease meanwhile; no timer of ours has run yet.
    lock.lease = { metadata: { name: 'l', resourceVersion: String(++lock.rv) }, spec: lease('other', 0, 15, 1) };
    clock.jump(20_000);
    expect(e.elector.holdsLease()).toBe(false);
    expect(() => e.elector.assertLeading()).toThrow(NotLeaderError);
    await clock.advance(0);
    await e.done;
    expect(e.state.signal?.aborted).toBe(true);
    expect(lock.lease.spec?.holderIdentity).toBe('other');
  });

  it("run resolves 'lost' when the deadline passes and 'stopped' when the caller stops it", async () => {
    const clock = new FakeClock(T);
    const lost = new MemoryLock();
    const a = start(lost, clock);
    await flushMicrotasks();
    lost.failWrites = true;
    await clock.advance(10_000);
    await expect(a.result).resolves.toBe('lost');
    const b = start(new MemoryLock(), clock);
    await flushMicrotasks();
    b.ctl.abort();
    await expect(b.result).resolves.toBe('stopped');
  });

  it('a holder that keeps changing its record is never overtaken, whatever its renewTime says', async () => {
    const clock = new FakeClock(T);
    const lock = new MemoryLock();
    // The holder's clock is an hour behind ours: its renewTime always looks expired.
    const renewByOther = (): void => {
      lock.lease = {
        metadata: { name: 'l', resourceVersion: String(++lock.rv) },
        spec: lease('other', 3600 - (clock.now() - T) / 1000, 15, 2),
      };
    };
    renewByOther();
    const e = start(lock, clock);
    await flushMicrotasks();
    for (let i = 0; i < 20; i++) {
      await clock.advance(2_000);
      renewByOther();
    }
    expect(e.state.started).toBe(0);
    await clock.advance(16_000); // the last change was first read 2 s after it: 14 s unchanged so far
    expect(e.state.started).toBe(0);
    await clock.advance(2_000); // unchanged for 15 s on our clock: taken over
    expect(e.state.started).toBe(1);
    e.ctl.abort();
    await e.done;
  });

  it('releases the lease on shutdown', async () => {
    const clock = new FakeClock(T);
    const lock = new MemoryLock();
    const e = start(lock, clock);
    await flushMicrotasks();
    await clock.advance(1_000);
    e.ctl.abort();
    await e.done;
    expect(e.state.stopped).toBe(1);
    expect(lock.lease?.spec).toMatchObject({
      holderIdentity: '',
      leaseDurationSeconds: 1,
      leaseTransitions: 0,
      renewTime: microTime(T + 1_000),
    });
  });

  it('a lost create race is not leadership', async () => {
    const clock = new FakeClock(T);
    const lock = new MemoryLock();
    const racer = new MemoryLock();
    // get() says absent, but create finds it exists
    lock.get = () => racer.get();
    lock.lease = { metadata: { name: 'l', resourceVersion: '1' }, spec: lease('other', 0) };
    const e = start(lock, clock);
    await flushMicrotasks();
    expect(e.state.started).toBe(0);
    e.ctl.abort();
    await e.done;
  });
});
