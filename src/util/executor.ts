import { setMaxListeners } from 'node:events';
import { DEFAULT_BACKOFF, backoffDelay, realClock, type BackoffPolicy, type Clock } from './backoff.js';
import { toStowageError, type StowageError } from './errors.js';
import { newLogger, type Logger } from './log.js';

/**
 * What an operation holds: a volume, or one pod's use of it. No pod = the whole volume, which
 * conflicts with every pod operation on it (the kubelet's nestedpendingoperations). A plain string
 * is the no-pod case: the PV controller keys by operation, the plugin manager by socket path.
 */
export type OpKey = string | { readonly volume: string; readonly pod?: string };

/** Result of asking for an operation; the last two are expected refusals, not failures. */
export type StartResult = 'started' | 'alreadyRunning' | 'backingOff';

export type Operation = (signal: AbortSignal) => Promise<void>;

/** Told to `onChange` listeners: an operation ended, or a key's backoff expired. Time to reconcile again. */
export type ExecutorChange =
  | { readonly kind: 'settled'; readonly key: OpKey; readonly name: string; readonly error?: StowageError }
  | { readonly kind: 'retryDue'; readonly key: OpKey; readonly name: string };

/**
 * Runs at most one operation per conflicting key, with exponential backoff per exact key after a
 * failure (initial, doubling, capped). Refusals are return values, never exceptions.
 */
export interface OperationExecutor {
  /**
   * Starts `op` under `key` unless a conflicting one is pending ('alreadyRunning') or the last
   * `name` operation on the exact key failed less than its backoff delay ago ('backingOff'). A
   * different `name` resets the key's backoff: it is another operation, not a retry. Success
   * forgets the key.
   */
  run(key: OpKey, name: string, op: Operation): StartResult;
  /** True when an operation conflicting with `key` is pending. */
  isPending(key: OpKey): boolean;
  /** Consecutive failures of the exact key's last operation (0 after a success or a reset). */
  failures(key: OpKey): number;
  /** Called after an operation settles and when a backoff expires. Returns an unsubscribe. */
  onChange(listener: (change: ExecutorChange) => void): () => void;
  /** Resolves once no operation is pending (tests and shutdown). */
  idle(): Promise<void>;
  /**
   * Aborts pending operations' signals and waits for them; an operation aborted so records no
   * failure. Later runs are refused as 'alreadyRunning'.
   */
  close(): Promise<void>;
}

export interface ExecutorOptions {
  /** Default DEFAULT_BACKOFF: 500 ms doubling, as Kubernetes' exponentialbackoff; the cap is ours. */
  readonly backoff?: BackoffPolicy;
  readonly clock?: Clock;
  /** Failures are logged here (warn), with the delay before a retry is allowed. */
  readonly log?: Logger;
  /** Failures that are expected states, not faults (e.g. a driver not registered yet): logged at debug. */
  readonly expected?: (e: StowageError) => boolean;
}

export function newOperationExecutor(o: ExecutorOptions = {}): OperationExecutor {
  return new Executor(
    o.backoff ?? DEFAULT_BACKOFF,
    o.clock ?? realClock,
    o.log ?? newLogger('operationexecutor'),
    o.expected ?? (() => false),
  );
}

interface Entry {
  readonly key: OpKey;
  name: string;
  pending: boolean;
  failures: number;
  retryAtMs: number;
  promise?: Promise<void>;
}

/** The entries of one volume, by pod ('' for the whole volume), and how many are pending. */
interface VolumeEntries {
  readonly byPod: Map<string, Entry>;
  pending: number;
}

const volumeOf = (k: OpKey): string => (typeof k === 'string' ? k : k.volume);
const podOf = (k: OpKey): string | undefined => (typeof k === 'string' ? undefined : k.pod);

/** Indexed by volume so that a reconciler pass over N volumes costs O(N), not O(N × entries). */
class Executor implements OperationExecutor {
  private readonly volumes = new Map<string, VolumeEntries>();
  private readonly listeners = new Set<(change: ExecutorChange) => void>();
  private readonly stop = new AbortController();
  private closed = false;

  constructor(
    private readonly policy: BackoffPolicy,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly expected: (e: StowageError) => boolean,
  ) {
    // Every operation in flight and every backoff timer listens on this one signal: not a leak.
    setMaxListeners(0, this.stop.signal);
  }

  run(key: OpKey, name: string, op: Operation): StartResult {
    if (this.closed || this.isPending(key)) return 'alreadyRunning';
    const volume = volumeOf(key);
    const pod = podOf(key) ?? '';
    let v = this.volumes.get(volume);
    let e = v?.byPod.get(pod);
    if (e && e.name === name && this.clock.now() < e.retryAtMs) return 'backingOff';
    if (e && e.name !== name) {
      e.name = name;
      e.failures = 0;
      e.retryAtMs = 0;
    }
    if (!v) this.volumes.set(volume, (v = { byPod: new Map(), pending: 0 }));
    if (!e)
      v.byPod.set(
        pod,
        (e = { key: typeof key === 'string' ? key : { ...key }, name, pending: false, failures: 0, retryAtMs: 0 }),
      );
    e.pending = true;
    v.pending++;
    e.promise = this.execute(volume, pod, v, e, name, op);
    return 'started';
  }

  /** Conflicting: same volume, and either side holds the whole volume or both name the same pod. */
  isPending(key: OpKey): boolean {
    const v = this.volumes.get(volumeOf(key));
    if (!v || v.pending === 0) return false;
    const pod = podOf(key);
    if (pod === undefined) return true;
    return v.byPod.get(pod)?.pending === true || v.byPod.get('')?.pending === true;
  }

  failures(key: OpKey): number {
    return this.volumes.get(volumeOf(key))?.byPod.get(podOf(key) ?? '')?.failures ?? 0;
  }

  onChange(listener: (change: ExecutorChange) => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  async idle(): Promise<void> {
    for (;;) {
      const pending: Array<Promise<void> | undefined> = [];
      for (const v of this.volumes.values())
        if (v.pending > 0) for (const e of v.byPod.values()) if (e.pending) pending.push(e.promise);
      if (pending.length === 0) return;
      await Promise.all(pending);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.stop.abort(new Error('operation executor closed'));
    await this.idle();
  }

  private async execute(
    volume: string,
    pod: string,
    v: VolumeEntries,
    e: Entry,
    name: string,
    op: Operation,
  ): Promise<void> {
    let error: StowageError | undefined;
    try {
      await op(this.stop.signal);
    } catch (err) {
      error = toStowageError(err);
    }
    e.pending = false;
    v.pending--;
    if (error && !this.stop.signal.aborted) {
      e.failures++;
      const delay = backoffDelay(this.policy, e.failures);
      e.retryAtMs = this.clock.now() + delay;
      (this.expected(error) ? this.log.debug : this.log.warn).call(this.log, 'operation failed; will retry', {
        key: keyString(e.key),
        operation: name,
        failures: e.failures,
        retryInMs: delay,
        error: error.message,
      });
      this.wakeAfter(delay, e.key, name);
    } else if (!error) {
      v.byPod.delete(pod);
      if (v.byPod.size === 0 && this.volumes.get(volume) === v) this.volumes.delete(volume);
    }
    this.notify({ kind: 'settled', key: e.key, name, ...(error ? { error } : {}) });
  }

  private wakeAfter(ms: number, key: OpKey, name: string): void {
    this.clock.sleep(ms, this.stop.signal).then(
      () => this.notify({ kind: 'retryDue', key, name }),
      () => undefined, // aborted at close: nobody is listening any more
    );
  }

  private notify(change: ExecutorChange): void {
    for (const l of [...this.listeners]) l(change);
  }
}

function keyString(k: OpKey): string {
  return typeof k === 'string' ? k : k.pod === undefined ? k.volume : `${k.volume}/${k.pod}`;
}
