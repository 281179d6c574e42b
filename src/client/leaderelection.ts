import type { Lease, LeaseSpec } from 'kubernetes-types/coordination/v1.js';
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { microTime } from '../util/metatime.js';
import { realClock, type Clock } from '../util/backoff.js';
import { AlreadyExistsError, ConflictError, NotFoundError, StowageError, toStowageError } from '../util/errors.js';
import { newLogger, type Logger } from '../util/log.js';
import { RestClient } from './rest.js';

/** What a candidate should do given the lease it just read. */
export type ElectionDecision =
  | { readonly action: 'create' }
  | { readonly action: 'acquire'; readonly transitions: number }
  | { readonly action: 'renew' }
  | { readonly action: 'wait'; readonly holder: string; readonly expiresAtMs: number };

export { microTime };

/** client-go's three timings, in milliseconds. */
export interface ElectionTimings {
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
}

// kube-controller-manager's and the CSI sidecars' defaults: lease 15 s, renew deadline 10 s, retry 2 s.
export const DEFAULT_TIMINGS: ElectionTimings = {
  leaseDurationMs: 15_000,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 2_000,
};

// client-go jitters the retry period by up to this factor; the renew deadline must outlast one jittered retry.
const JITTER_FACTOR = 1.2;

/**
 * client-go's NewLeaderElector checks, as a message or undefined. The leader stops acting when a
 * renewal has not succeeded for renewDeadline; a candidate takes over after leaseDuration without a
 * change: renewDeadline < leaseDuration is what keeps two leaders from overlapping.
 */
export function timingsError(t: ElectionTimings): string | undefined {
  if (!(t.leaseDurationMs > 0)) return 'leaseDuration must be greater than zero';
  if (!(t.renewDeadlineMs > 0)) return 'renewDeadline must be greater than zero';
  if (!(t.retryPeriodMs > 0)) return 'retryPeriod must be greater than zero';
  if (t.leaseDurationMs <= t.renewDeadlineMs) return 'leaseDuration must be greater than renewDeadline';
  if (t.renewDeadlineMs <= JITTER_FACTOR * t.retryPeriodMs)
    return 'renewDeadline must be greater than retryPeriod*JitterFactor';
  if (t.leaseDurationMs % 1000 !== 0)
    return 'leaseDuration must be a whole number of seconds (Lease.spec.leaseDurationSeconds)';
  return undefined;
}

/**
 * The election rule, as a pure function: no lease → create it; ours → renew; nobody's (released)
 * → take it; another's → take it only once the record has not changed for its leaseDurationSeconds,
 * counted on our own clock from `observedAtMs`, when we first saw this record (client-go's
 * observedTime: the holder's renewTime comes from another clock and is never compared with ours).
 */
export function decide(
  spec: LeaseSpec | undefined,
  observedAtMs: number,
  nowMs: number,
  identity: string,
): ElectionDecision {
  if (!spec) return { action: 'create' };
  const holder = spec.holderIdentity ?? '';
  if (holder === identity) return { action: 'renew' };
  const transitions = (spec.leaseTransitions ?? 0) + 1; // client-go counts any change of holder, including from a released lease
  if (holder === '') return { action: 'acquire', transitions };
  const expiresAtMs = observedAtMs + (spec.leaseDurationSeconds ?? 0) * 1000;
  if (expiresAtMs > nowMs) return { action: 'wait', holder, expiresAtMs };
  return { action: 'acquire', transitions };
}

/** The spec to write after a decision to create, acquire or renew. */
export function nextLeaseSpec(
  d: Exclude<ElectionDecision, { action: 'wait' }>,
  prev: LeaseSpec | undefined,
  identity: string,
  nowMs: number,
  leaseDurationSeconds: number,
): LeaseSpec {
  const now = microTime(nowMs);
  switch (d.action) {
    case 'create':
      return { holderIdentity: identity, leaseDurationSeconds, acquireTime: now, renewTime: now, leaseTransitions: 0 };
    case 'acquire':
      return {
        holderIdentity: identity,
        leaseDurationSeconds,
        acquireTime: now,
        renewTime: now,
        leaseTransitions: d.transitions,
      };
    case 'renew':
      return {
        ...prev,
        holderIdentity: identity,
        leaseDurationSeconds,
        acquireTime: prev?.acquireTime ?? now,
        renewTime: now,
      };
  }
}

/**
 * An effect refused because this process does not hold its lease within the renew deadline. Not
 * retryable: leadership that lapsed is not regained in-process (the process exits), so queues,
 * event writers and save loops give up at once instead of backing off.
 */
export class NotLeaderError extends StowageError {
  readonly code = 'Unavailable';
  readonly retryable = false;
}

/**
 * Where the lease lives (client-go's resourcelock.Interface, reduced to what we use). `create`
 * fails with AlreadyExistsError and `update` with ConflictError when another candidate raced us.
 */
export interface LeaseLock {
  /** undefined when the lease does not exist. */
  get(): Promise<Lease | undefined>;
  create(spec: LeaseSpec): Promise<void>;
  update(prev: Lease, spec: LeaseSpec): Promise<void>;
}

/** A coordination.k8s.io/v1 Lease through the API; creates the namespace when it is missing. */
export function apiLeaseLock(o: {
  client: RestClient;
  name: string;
  namespace?: string;
  timeoutMs?: number;
}): LeaseLock {
  const ns = o.namespace ?? 'kube-system';
  const leases = o.client.resource('Lease');
  // Each call must end well inside the elector's renew deadline (kube-controller-manager: 10 s).
  const timeoutMs = o.timeoutMs ?? 5_000;
  return {
    get: async () => {
      return leases.getIfExists(o.name, { namespace: ns, timeoutMs });
    },
    create: async (spec) => {
      const lease: Lease = {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: o.name, namespace: ns },
        spec,
      };
      try {
        await leases.create(lease, { timeoutMs });
      } catch (e) {
        if (!(e instanceof NotFoundError)) throw e;
        // Our API server does not pre-create kube-system: create the namespace, then the lease.
        await o.client
          .resource('Namespace')
          .create({ metadata: { name: ns } }, { timeoutMs })
          .catch((err: unknown) => {
            if (!(err instanceof AlreadyExistsError)) throw err;
          });
        await leases.create(lease, { timeoutMs });
      }
    },
    update: async (prev, spec) => {
      await leases.update({ ...prev, spec }, { timeoutMs });
    },
  };
}

export interface LeaderElectorOptions extends Partial<ElectionTimings> {
  /** The lease: `apiLeaseLock({ client, name: 'stowage-controllers' })`. */
  readonly lock: LeaseLock;
  /** Unique per candidate, e.g. `${hostname}_${uuid}`. */
  readonly identity: string;
  /** Clear the lease on shutdown so a successor need not wait for expiry (default true). */
  readonly releaseOnCancel?: boolean;
  readonly clock?: Clock;
  readonly log?: Logger;
  /** Called on becoming leader; `signal` aborts when leadership is lost or the elector stops. */
  readonly onStartedLeading: (signal: AbortSignal) => void | Promise<void>;
  readonly onStoppedLeading?: () => void;
  /** Called when a different holder is observed. */
  readonly onNewLeader?: (identity: string) => void;
}

/** How a campaign ended: `stopped` by the caller's signal, or leadership `lost` (renew deadline passed). */
export type ElectionEnd = 'stopped' | 'lost';

/**
 * Leader election through a coordination.k8s.io/v1 Lease, as client-go's leaderelection: try
 * every retryPeriod until acquired; renew every retryPeriod; stop leading when no renewal has
 * succeeded for renewDeadline. `run` resolves when leadership ends or `signal` aborts; it does not
 * campaign again (the caller decides, e.g. exit and restart).
 *
 * `assertLeading` is the gate for effects: a process paused (SIGSTOP) past its renew deadline
 * and resumed must not act on stale leadership before its loop notices, so every write checks it.
 */
export class LeaderElector {
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly timings: ElectionTimings;
  private leading = false;
  /** Start of the last successful acquire/renew: the lease is ours until at least then + leaseDuration. */
  private lastRenewStartMs = -Infinity;
  private observedHolder = '';
  private observedRecord = '';
  private observedAtMs = 0;

  constructor(private readonly o: LeaderElectorOptions) {
    this.clock = o.clock ?? realClock;
    this.log = o.log ?? newLogger(`leaderelection/${o.identity}`);
    this.timings = {
      leaseDurationMs: o.leaseDurationMs ?? DEFAULT_TIMINGS.leaseDurationMs,
      renewDeadlineMs: o.renewDeadlineMs ?? DEFAULT_TIMINGS.renewDeadlineMs,
      retryPeriodMs: o.retryPeriodMs ?? DEFAULT_TIMINGS.retryPeriodMs,
    };
    const invalid = timingsError(this.timings);
    if (invalid) throw new RangeError(invalid);
  }

  isLeader(): boolean {
    return this.leading;
  }

  /** True while leading and the last successful renewal began less than renewDeadline ago. */
  holdsLease(): boolean {
    return this.leading && this.clock.now() - this.lastRenewStartMs < this.timings.renewDeadlineMs;
  }

  /** Throws NotLeaderError unless `holdsLease()`. */
  assertLeading(): void {
    if (!this.holdsLease()) throw new NotLeaderError(`not the leader (identity ${this.o.identity}): effect refused`);
  }

  async run(signal: AbortSignal): Promise<ElectionEnd> {
    const { retryPeriodMs: retry, renewDeadlineMs: deadline } = this.timings;
    if (signal.aborted) return 'stopped';
    while (!(await this.tryAcquireOrRenew())) {
      if (!(await this.sleep(retry, signal))) return 'stopped';
    }
    if (signal.aborted) {
      await this.release();
      return 'stopped';
    }
    this.leading = true;
    this.log.info('became leader', { identity: this.o.identity });
    const leadership = new AbortController();
    const onAbort = (): void => leadership.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    Promise.resolve()
      .then(() => this.o.onStartedLeading(leadership.signal))
      .catch((e: unknown) => this.log.error('onStartedLeading failed', { error: toStowageError(e).message }));
    let end: ElectionEnd = 'stopped';
    // The deadline is kept by its own timer, so that a renewal hanging on a slow API server does
    // not extend leadership past it.
    const watchdog = (async (): Promise<void> => {
      for (;;) {
        const left = this.lastRenewStartMs + deadline - this.clock.now();
        if (left <= 0) {
          this.log.warn('failed to renew lease within the renew deadline; leaderelection lost', {
            identity: this.o.identity,
          });
          end = 'lost';
          return leadership.abort(new NotLeaderError('leaderelection lost'));
        }
        if (!(await this.sleep(left, leadership.signal))) return;
      }
    })();
    while (await this.sleep(retry, leadership.signal)) await this.tryAcquireOrRenew();
    await watchdog;
    signal.removeEventListener('abort', onAbort);
    this.leading = false;
    leadership.abort(new NotLeaderError('leaderelection lost'));
    if (signal.aborted) {
      end = 'stopped';
      await this.release();
    }
    this.o.onStoppedLeading?.();
    return end;
  }

  private async sleep(ms: number, signal: AbortSignal): Promise<boolean> {
    try {
      await this.clock.sleep(ms, signal);
      return !signal.aborted;
    } catch {
      return false;
    }
  }

  /** One round of the protocol; false when someone else holds the lease or a read/write failed. */
  async tryAcquireOrRenew(): Promise<boolean> {
    const durationS = Math.round(this.timings.leaseDurationMs / 1000);
    const startMs = this.clock.now();
    try {
      const lease = await this.o.lock.get();
      const now = this.clock.now();
      const record = JSON.stringify(lease?.spec ?? null);
      if (record !== this.observedRecord) {
        this.observedRecord = record;
        this.observedAtMs = now;
      }
      const d = decide(lease?.spec, this.observedAtMs, now, this.o.identity);
      const holder = lease?.spec?.holderIdentity ?? '';
      if (holder !== this.observedHolder) {
        this.observedHolder = holder;
        if (holder) this.o.onNewLeader?.(holder);
      }
      if (d.action === 'wait') return false;
      // A leader past its renew deadline (e.g. resumed after SIGSTOP) has lost: it writes nothing, not even the lease.
      if (this.leading && !this.holdsLease()) return false;
      const spec = nextLeaseSpec(d, lease?.spec, this.o.identity, now, durationS);
      if (!lease) await this.o.lock.create(spec);
      else await this.o.lock.update(lease, spec);
      this.observedRecord = JSON.stringify(spec);
      this.observedAtMs = this.clock.now();
      this.lastRenewStartMs = startMs;
      if (d.action !== 'renew') this.observedHolder = this.o.identity;
      return true;
    } catch (e) {
      const quiet = e instanceof ConflictError || e instanceof AlreadyExistsError; // another candidate won the race
      (quiet ? this.log.debug : this.log.warn)('lease acquire/renew failed', { error: toStowageError(e).message });
      return false;
    }
  }

  /** client-go's ReleaseOnCancel: clear the holder and shorten the lease to 1 s. */
  private async release(): Promise<void> {
    if (this.o.releaseOnCancel === false) return;
    try {
      const lease = await this.o.lock.get();
      if (!lease || lease.spec?.holderIdentity !== this.o.identity) return;
      const now = microTime(this.clock.now());
      await this.o.lock.update(lease, {
        holderIdentity: '',
        leaseDurationSeconds: 1,
        acquireTime: now,
        renewTime: now,
        leaseTransitions: lease.spec.leaseTransitions ?? 0,
      });
      this.log.info('released lease', { identity: this.o.identity });
    } catch (e) {
      this.log.warn('failed to release lease', { error: toStowageError(e).message });
    }
  }
}

/** `--leader-elect…` as kube-controller-manager and the CSI sidecars take it. */
export interface LeaderElectionConfig extends Partial<ElectionTimings> {
  /** Unique per candidate; default `<hostname>_<uuid>`. */
  readonly identity?: string;
  /** The Lease (`--leader-elect-resource-name`); each caller has its default. */
  readonly leaseName?: string;
  /** Default kube-system (`--leader-elect-resource-namespace`, `--leader-election-namespace`). */
  readonly leaseNamespace?: string;
}

/** How a leader-elected process ends when its lease is lost: kube-controller-manager exits with "leaderelection lost". */
export class LeaderElectionLostError extends Error {
  constructor() {
    super('leaderelection lost');
    this.name = 'LeaderElectionLostError';
  }
}

/**
 * Runs `work` only while holding the lease, as kube-controller-manager and the CSI sidecars do.
 * `work` gets a client whose every write passes the elector's gate, and the gate itself for other
 * effects (CSI calls): nothing is done on a lease not renewed within the renew deadline. Resolves
 * when `signal` aborts; rejects with LeaderElectionLostError when the lease is lost (the caller
 * exits non-zero and its supervisor restarts it; it never campaigns again in-process).
 */
export async function runLeaderElected(o: {
  readonly client: RestClient;
  readonly config: LeaderElectionConfig & { readonly leaseName: string };
  readonly signal: AbortSignal;
  readonly log?: Logger;
  readonly work: (w: { client: RestClient; gate: () => void; signal: AbortSignal }) => Promise<void>;
}): Promise<void> {
  const c = o.config;
  const identity = c.identity ?? `${hostname()}_${randomUUID()}`;
  const renewDeadlineMs = c.renewDeadlineMs ?? DEFAULT_TIMINGS.renewDeadlineMs;
  let elector: LeaderElector | undefined;
  const gate = (): void => {
    if (!elector) throw new NotLeaderError('not the leader: effect refused');
    elector.assertLeading();
  };
  const gated = new RestClient({ ...o.client.config, writeGate: gate });
  let ran: Promise<void> | undefined;
  elector = new LeaderElector({
    // Each lease call ends within the renew deadline, so one hung call cannot outlive leadership.
    lock: apiLeaseLock({
      client: o.client,
      name: c.leaseName,
      namespace: c.leaseNamespace ?? 'kube-system',
      timeoutMs: Math.min(5_000, renewDeadlineMs),
    }),
    identity,
    ...(c.leaseDurationMs === undefined ? {} : { leaseDurationMs: c.leaseDurationMs }),
    ...(c.renewDeadlineMs === undefined ? {} : { renewDeadlineMs: c.renewDeadlineMs }),
    ...(c.retryPeriodMs === undefined ? {} : { retryPeriodMs: c.retryPeriodMs }),
    ...(o.log ? { log: o.log.child('leaderelection') } : {}),
    onStartedLeading: (signal) => {
      ran = o.work({ client: gated, gate, signal });
      return ran;
    },
    onNewLeader: (id) => (o.log ?? newLogger('leaderelection')).info('new leader', { identity: id }),
  });
  try {
    const end = await elector.run(o.signal);
    await ran?.catch((e: unknown) => {
      if (end === 'stopped') throw e;
    });
    if (end === 'lost') throw new LeaderElectionLostError();
  } finally {
    gated.close();
  }
}
