import { setMaxListeners } from 'node:events';
import { backoffDelay, realClock, type BackoffPolicy, type Clock } from '../../../util/backoff.js';
import { toStowageError, type StowageError } from '../../../util/errors.js';
import type { PodUid, VolumeName } from '../types.js';

/** No pod: the operation holds the whole volume and conflicts with every pod operation on it. */
export interface OpKey {
  readonly volume: VolumeName;
  readonly pod?: PodUid;
}

/** `alreadyExists` and `backoff` are expected refusals: the reconciler ignores them. */
export type StartResult = 'started' | 'alreadyExists' | 'backoff';

export type Operation = (signal: AbortSignal) => Promise<void>;

/**
 * Nested pending operations (kubelet's nestedpendingoperations): at most one operation per
 * conflicting key, exponential backoff per exact key after a failure (initial, doubling, capped),
 * reset when a different operation name arrives on that key or the operation succeeds.
 */
export interface NestedPendingOperations {
  /** Starts `op` unless a conflicting one is pending or this key's last `name` failed too recently. */
  run(key: OpKey, name: string, op: Operation): StartResult;
  /** True when an operation conflicting with `key` is pending. */
  isPending(key: OpKey): boolean;
  /** Consecutive failures recorded for the exact key (0 when none). */
  failures(key: OpKey): number;
  /** Called after every operation settles (time to reconcile again). Returns an unsubscribe. */
  onSettled(fn: (key: OpKey, name: string, error?: StowageError) => void): () => void;
  /** Resolves once nothing is pending. */
  idle(): Promise<void>;
  /** Aborts pending operations' signals and waits for them; later runs are refused as alreadyExists. */
  close(): Promise<void>;
}

export function newNestedPendingOperations(o: { backoff: BackoffPolicy; clock?: Clock }): NestedPendingOperations {
  return new Nested(o.backoff, o.clock ?? realClock);
}

interface Entry {
  readonly key: OpKey;
  name: string;
  pending: boolean;
  failures: number;
  retryAtMs: number;
  promise?: Promise<void>;
}

const exact = (a: OpKey, b: OpKey): boolean => a.volume === b.volume && a.pod === b.pod;
const conflicts = (a: OpKey, b: OpKey): boolean => a.volume === b.volume && (a.pod === undefined || b.pod === undefined || a.pod === b.pod);

class Nested implements NestedPendingOperations {
  private entries: Entry[] = [];
  private readonly listeners = new Set<(key: OpKey, name: string, error?: StowageError) => void>();
  private readonly stop = new AbortController();
  private closed = false;

  constructor(
    private readonly policy: BackoffPolicy,
    private readonly clock: Clock,
  ) {
    // Every operation in flight listens on the stop signal (through its CSI call): not a leak.
    setMaxListeners(0, this.stop.signal);
  }

  run(key: OpKey, name: string, op: Operation): StartResult {
    if (this.closed) return 'alreadyExists';
    if (this.entries.some((e) => e.pending && conflicts(e.key, key))) return 'alreadyExists';
    let e = this.entries.find((x) => exact(x.key, key));
    if (e && e.name === name && this.clock.now() < e.retryAtMs) return 'backoff';
    if (e && e.name !== name) {
      e.name = name;
      e.failures = 0;
      e.retryAtMs = 0;
    }
    if (!e) this.entries.push((e = { key: { ...key }, name, pending: false, failures: 0, retryAtMs: 0 }));
    const entry = e;
    entry.pending = true;
    entry.promise = (async () => {
      let error: StowageError | undefined;
      try {
        await op(this.stop.signal);
      } catch (err) {
        error = toStowageError(err);
      }
      entry.pending = false;
      if (error) {
        entry.failures++;
        entry.retryAtMs = this.clock.now() + backoffDelay(this.policy, entry.failures);
      } else {
        this.entries = this.entries.filter((x) => x !== entry);
      }
      for (const l of this.listeners) l(entry.key, name, error);
    })();
    return 'started';
  }

  isPending(key: OpKey): boolean {
    return this.entries.some((e) => e.pending && conflicts(e.key, key));
  }

  failures(key: OpKey): number {
    return this.entries.find((e) => exact(e.key, key))?.failures ?? 0;
  }

  onSettled(fn: (key: OpKey, name: string, error?: StowageError) => void): () => void {
    this.listeners.add(fn);
    return () => void this.listeners.delete(fn);
  }

  async idle(): Promise<void> {
    for (;;) {
      const pending = this.entries.filter((e) => e.pending).map((e) => e.promise);
      if (pending.length === 0) return;
      await Promise.all(pending);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.stop.abort(new Error('volume manager stopping'));
    await this.idle();
  }
}
