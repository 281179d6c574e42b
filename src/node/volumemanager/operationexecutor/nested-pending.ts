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

/** The entries of one volume, by pod ('' for the whole-volume key), and how many are pending. */
interface VolumeEntries {
  readonly byPod: Map<string, Entry>;
  pending: number;
}

/** Indexed by volume so that a reconciler pass over N volumes costs O(N), not O(N × entries). */
class Nested implements NestedPendingOperations {
  private readonly volumes = new Map<VolumeName, VolumeEntries>();
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
    if (this.closed || this.isPending(key)) return 'alreadyExists';
    let v = this.volumes.get(key.volume);
    let e = v?.byPod.get(key.pod ?? '');
    if (e && e.name === name && this.clock.now() < e.retryAtMs) return 'backoff';
    if (e && e.name !== name) {
      e.name = name;
      e.failures = 0;
      e.retryAtMs = 0;
    }
    if (!v) this.volumes.set(key.volume, (v = { byPod: new Map(), pending: 0 }));
    if (!e) v.byPod.set(key.pod ?? '', (e = { key: { ...key }, name, pending: false, failures: 0, retryAtMs: 0 }));
    const entry = e;
    const vol = v;
    entry.pending = true;
    vol.pending++;
    entry.promise = (async () => {
      let error: StowageError | undefined;
      try {
        await op(this.stop.signal);
      } catch (err) {
        error = toStowageError(err);
      }
      entry.pending = false;
      vol.pending--;
      if (error) {
        entry.failures++;
        entry.retryAtMs = this.clock.now() + backoffDelay(this.policy, entry.failures);
      } else {
        vol.byPod.delete(entry.key.pod ?? '');
        if (vol.byPod.size === 0 && this.volumes.get(entry.key.volume) === vol) this.volumes.delete(entry.key.volume);
      }
      for (const l of this.listeners) l(entry.key, name, error);
    })();
    return 'started';
  }

  /** Conflicting: same volume, and either side holds the whole volume or both name the same pod. */
  isPending(key: OpKey): boolean {
    const v = this.volumes.get(key.volume);
    if (!v || v.pending === 0) return false;
    if (key.pod === undefined) return true;
    return v.byPod.get(key.pod)?.pending === true || v.byPod.get('')?.pending === true;
  }

  failures(key: OpKey): number {
    return this.volumes.get(key.volume)?.byPod.get(key.pod ?? '')?.failures ?? 0;
  }

  onSettled(fn: (key: OpKey, name: string, error?: StowageError) => void): () => void {
    this.listeners.add(fn);
    return () => void this.listeners.delete(fn);
  }

  async idle(): Promise<void> {
    for (;;) {
      const pending: Array<Promise<void> | undefined> = [];
      for (const v of this.volumes.values()) for (const e of v.byPod.values()) if (e.pending) pending.push(e.promise);
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
