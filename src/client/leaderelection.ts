import type { Lease, LeaseSpec } from 'kubernetes-types/coordination/v1.js';
import { microTime } from '../util/metatime.js';
import { realClock, type Clock } from '../util/backoff.js';
import { AlreadyExistsError, ConflictError, NotFoundError, toStowageError } from '../util/errors.js';
import { newLogger, type Logger } from '../util/log.js';
import type { RestClient } from './rest.js';

/** What a candidate should do given the lease it just read. */
export type ElectionDecision =
  | { readonly action: 'create' }
  | { readonly action: 'acquire'; readonly transitions: number }
  | { readonly action: 'renew' }
  | { readonly action: 'wait'; readonly holder: string; readonly expiresAtMs: number };

export { microTime };

/** When the lease stops protecting its holder: renewTime + leaseDurationSeconds. */
export function leaseExpiry(spec: LeaseSpec): number {
  const renew = spec.renewTime ? Date.parse(spec.renewTime) : NaN;
  if (Number.isNaN(renew)) return -Infinity;
  return renew + (spec.leaseDurationSeconds ?? 0) * 1000;
}

/**
 * The election rule, as a pure function: no lease → create it; ours → renew; nobody's (released)
 * or expired → take it over, counting a transition when it changes hands; otherwise wait.
 */
export function decide(spec: LeaseSpec | undefined, nowMs: number, identity: string): ElectionDecision {
  if (!spec) return { action: 'create' };
  const holder = spec.holderIdentity ?? '';
  if (holder === identity) return { action: 'renew' };
  const transitions = (spec.leaseTransitions ?? 0) + 1; // client-go counts any change of holder, including from a released lease
  if (holder === '') return { action: 'acquire', transitions };
  const expiresAtMs = leaseExpiry(spec);
  if (expiresAtMs < nowMs) return { action: 'acquire', transitions };
  return { action: 'wait', holder, expiresAtMs };
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
      return { holderIdentity: identity, leaseDurationSeconds, acquireTime: now, renewTime: now, leaseTransitions: d.transitions };
    case 'renew':
      return { ...prev, holderIdentity: identity, leaseDurationSeconds, acquireTime: prev?.acquireTime ?? now, renewTime: now };
  }
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
export function apiLeaseLock(o: { client: RestClient; name: string; namespace?: string; timeoutMs?: number }): LeaseLock {
  const ns = o.namespace ?? 'kube-system';
  const leases = o.client.resource('Lease');
  // Each call must end well inside the elector's renew deadline (kube-controller-manager: 10 s).
  const timeoutMs = o.timeoutMs ?? 5_000;
  return {
    get: async () => {
      try {
        return await leases.get(o.name, { namespace: ns, timeoutMs });
      } catch (e) {
        if (e instanceof NotFoundError) return undefined;
        throw e;
      }
    },
    create: async (spec) => {
      const lease: Lease = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: o.name, namespace: ns }, spec };
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

export interface LeaderElectorOptions {
  /** The lease: `apiLeaseLock({ client, name: 'stowage-controllers' })`. */
  readonly lock: LeaseLock;
  /** Unique per candidate, e.g. `${hostname}_${uuid}`. */
  readonly identity: string;
  // Defaults are kube-controller-manager's: 15 s lease, 10 s renew deadline, 2 s retry period.
  readonly leaseDurationMs?: number;
  readonly renewDeadlineMs?: number;
  readonly retryPeriodMs?: number;
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

/**
 * Leader election through a coordination.k8s.io/v1 Lease, as client-go's leaderelection: try
 * every retryPeriod until acquired; renew every retryPeriod; stop leading when no renewal has
 * succeeded for renewDeadline. `run` resolves when leadership ends or `signal` aborts; it does not
 * campaign again (the caller decides, e.g. exit and restart).
 */
export class LeaderElector {
  private readonly clock: Clock;
  private readonly log: Logger;
  private leading = false;
  private observedHolder = '';

  constructor(private readonly o: LeaderElectorOptions) {
    this.clock = o.clock ?? realClock;
    this.log = o.log ?? newLogger(`leaderelection/${o.identity}`);
  }

  isLeader(): boolean {
    return this.leading;
  }

  async run(signal: AbortSignal): Promise<void> {
    const retry = this.o.retryPeriodMs ?? 2_000;
    const deadline = this.o.renewDeadlineMs ?? 10_000;
    if (signal.aborted) return;
    while (!(await this.tryAcquireOrRenew())) {
      if (!(await this.sleep(retry, signal))) return;
    }
    if (signal.aborted) return this.release();
    this.leading = true;
    this.log.info('became leader', { identity: this.o.identity });
    const leadership = new AbortController();
    const onAbort = (): void => leadership.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    Promise.resolve()
      .then(() => this.o.onStartedLeading(leadership.signal))
      .catch((e: unknown) => this.log.error('onStartedLeading failed', { error: toStowageError(e).message }));
    let lastRenew = this.clock.now();
    while (await this.sleep(retry, signal)) {
      if (await this.tryAcquireOrRenew()) {
        lastRenew = this.clock.now();
      } else if (this.clock.now() - lastRenew >= deadline) {
        this.log.warn('failed to renew lease within the renew deadline; leadership lost', { identity: this.o.identity });
        break;
      }
    }
    signal.removeEventListener('abort', onAbort);
    leadership.abort(new Error('leadership lost'));
    if (signal.aborted) await this.release();
    this.leading = false;
    this.o.onStoppedLeading?.();
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
    const durationS = Math.max(1, Math.round((this.o.leaseDurationMs ?? 15_000) / 1000));
    try {
      const lease = await this.o.lock.get();
      const now = this.clock.now();
      const d = decide(lease?.spec, now, this.o.identity);
      const holder = lease?.spec?.holderIdentity ?? '';
      if (holder !== this.observedHolder) {
        this.observedHolder = holder;
        if (holder) this.o.onNewLeader?.(holder);
      }
      if (d.action === 'wait') return false;
      const spec = nextLeaseSpec(d, lease?.spec, this.o.identity, now, durationS);
      if (!lease) await this.o.lock.create(spec);
      else await this.o.lock.update(lease, spec);
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
