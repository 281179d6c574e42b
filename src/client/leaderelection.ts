import type { Lease, LeaseSpec } from 'kubernetes-types/coordination/v1.js';
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

/** metav1.MicroTime: RFC 3339 with microseconds. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace('Z', '000Z');
}

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

export interface LeaderElectorOptions {
  readonly client: RestClient;
  /** Lease name, e.g. `stowage-controllers`. */
  readonly name: string;
  /** Created when missing. Default `kube-system`. */
  readonly namespace?: string;
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
  private readonly ns: string;
  private leading = false;
  private observedHolder = '';

  constructor(private readonly o: LeaderElectorOptions) {
    this.clock = o.clock ?? realClock;
    this.log = o.log ?? newLogger(`leaderelection/${o.name}`);
    this.ns = o.namespace ?? 'kube-system';
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

  private leases() {
    return this.o.client.resource('Lease');
  }

  /** One round of the protocol; false when someone else holds the lease or a write failed. */
  async tryAcquireOrRenew(): Promise<boolean> {
    const timeoutMs = this.o.renewDeadlineMs ?? 10_000;
    const durationS = Math.max(1, Math.round((this.o.leaseDurationMs ?? 15_000) / 1000));
    try {
      let lease: Lease | undefined;
      try {
        lease = await this.leases().get(this.o.name, { namespace: this.ns, timeoutMs });
      } catch (e) {
        if (!(e instanceof NotFoundError)) throw e;
      }
      const now = this.clock.now();
      const d = decide(lease?.spec, now, this.o.identity);
      const holder = lease?.spec?.holderIdentity ?? '';
      if (holder !== this.observedHolder) {
        this.observedHolder = holder;
        if (holder) this.o.onNewLeader?.(holder);
      }
      if (d.action === 'wait') return false;
      const spec = nextLeaseSpec(d, lease?.spec, this.o.identity, now, durationS);
      if (d.action === 'create' || !lease) {
        await this.createLease(spec, timeoutMs);
      } else {
        await this.leases().update({ ...lease, spec }, { timeoutMs });
      }
      if (d.action !== 'renew') this.observedHolder = this.o.identity;
      return true;
    } catch (e) {
      const quiet = e instanceof ConflictError || e instanceof AlreadyExistsError; // another candidate won the race
      (quiet ? this.log.debug : this.log.warn)('lease acquire/renew failed', { error: toStowageError(e).message });
      return false;
    }
  }

  private async createLease(spec: LeaseSpec, timeoutMs: number): Promise<void> {
    const lease: Lease = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: this.o.name, namespace: this.ns }, spec };
    try {
      await this.leases().create(lease, { timeoutMs });
    } catch (e) {
      if (!(e instanceof NotFoundError)) throw e;
      // Our API server does not pre-create kube-system: create the namespace, then the lease.
      await this.o.client
        .resource('Namespace')
        .create({ metadata: { name: this.ns } }, { timeoutMs })
        .catch((err: unknown) => {
          if (!(err instanceof AlreadyExistsError)) throw err;
        });
      await this.leases().create(lease, { timeoutMs });
    }
  }

  /** client-go's ReleaseOnCancel: clear the holder and shorten the lease to 1 s. */
  private async release(): Promise<void> {
    if (this.o.releaseOnCancel === false) return;
    try {
      const lease = await this.leases().get(this.o.name, { namespace: this.ns });
      if (lease.spec?.holderIdentity !== this.o.identity) return;
      const now = microTime(this.clock.now());
      const spec: LeaseSpec = {
        holderIdentity: '',
        leaseDurationSeconds: 1,
        acquireTime: now,
        renewTime: now,
        leaseTransitions: lease.spec.leaseTransitions ?? 0,
      };
      await this.leases().update({ ...lease, spec });
      this.log.info('released lease', { identity: this.o.identity });
    } catch (e) {
      this.log.warn('failed to release lease', { error: toStowageError(e).message });
    }
  }
}
