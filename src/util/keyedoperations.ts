import { setMaxListeners } from 'node:events';
import { DEFAULT_BACKOFF, backoffDelay, realClock, type BackoffPolicy, type Clock } from './backoff.js';
import { toStowageError, type StowageError } from './errors.js';
import { newLogger, type Logger } from './log.js';

/** Result of asking for an operation; the last two are expected refusals, not failures. */
export type StartResult = 'started' | 'alreadyRunning' | 'backingOff';

export type Operation = (signal: AbortSignal) => Promise<void>;

/**
 * Runs at most one operation per key (the plugin manager keys by socket path, the PV controller by
 * operation name), with per-key exponential backoff after a failure.
 */
export interface OperationExecutor {
  /**
   * Starts `op` under `key` unless one is pending for the key ('alreadyRunning') or the last
   * `name` operation on the key failed less than its backoff delay ago ('backingOff'). A different
   * `name` resets the key's backoff: it is another operation, not a retry. Success resets it too.
   */
  run(key: string, name: string, op: Operation): StartResult;
  isPending(key: string): boolean;
  /** Consecutive failures of the key's last operation (0 after a success or a reset). */
  failures(key: string): number;
  /** Called after an operation settles and when a backoff expires: time to reconcile again. */
  onChange(listener: () => void): () => void;
  /** Resolves once no operation is pending (for tests and shutdown). */
  idle(): Promise<void>;
  /** Aborts pending operations and stops backoff timers; later runs are refused as 'alreadyRunning'. */
  close(): Promise<void>;
}

export interface ExecutorOptions {
  readonly backoff?: BackoffPolicy;
  readonly clock?: Clock;
  readonly log?: Logger;
}

export function newOperationExecutor(o: ExecutorOptions = {}): OperationExecutor {
  return new Executor(o.backoff ?? DEFAULT_BACKOFF, o.clock ?? realClock, o.log ?? newLogger('operationexecutor'));
}

interface Failure {
  readonly name: string;
  readonly count: number;
  readonly retryAtMs: number;
  readonly error: StowageError;
}

class Executor implements OperationExecutor {
  private readonly pending = new Map<string, Promise<void>>();
  private readonly failed = new Map<string, Failure>();
  private readonly listeners = new Set<() => void>();
  private readonly stop = new AbortController();
  private closed = false;

  constructor(
    private readonly policy: BackoffPolicy,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {
    // Every running operation (and each call inside it) listens on this one signal.
    setMaxListeners(0, this.stop.signal);
  }

  run(key: string, name: string, op: Operation): StartResult {
    if (this.closed || this.pending.has(key)) return 'alreadyRunning';
    const f = this.failed.get(key);
    if (f && f.name === name && this.clock.now() < f.retryAtMs) return 'backingOff';
    if (f && f.name !== name) this.failed.delete(key);
    const p = this.execute(key, name, op).finally(() => {
      this.pending.delete(key);
      this.notify();
    });
    this.pending.set(key, p);
    return 'started';
  }

  isPending(key: string): boolean {
    return this.pending.has(key);
  }

  failures(key: string): number {
    return this.failed.get(key)?.count ?? 0;
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async idle(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending.values()]);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.stop.abort(new Error('operation executor closed'));
    await this.idle();
  }

  private async execute(key: string, name: string, op: Operation): Promise<void> {
    try {
      await op(this.stop.signal);
      this.failed.delete(key);
    } catch (e) {
      if (this.stop.signal.aborted) return;
      const error = toStowageError(e);
      const count = (this.failed.get(key)?.name === name ? this.failed.get(key)?.count ?? 0 : 0) + 1;
      const delay = backoffDelay(this.policy, count);
      this.failed.set(key, { name, count, retryAtMs: this.clock.now() + delay, error });
      this.log.warn('operation failed; will retry', { key, operation: name, failures: count, retryInMs: delay, error: error.message });
      this.wakeAfter(delay);
    }
  }

  private wakeAfter(ms: number): void {
    this.clock.sleep(ms, this.stop.signal).then(
      () => this.notify(),
      () => undefined, // aborted at close: nobody is listening any more
    );
  }

  private notify(): void {
    for (const l of [...this.listeners]) l();
  }
}
