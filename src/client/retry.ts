import { realClock, type Clock } from '../util/backoff.js';
import { ConflictError } from '../util/errors.js';

export interface RetryOptions {
  /** Attempts in all (client-go's retry.DefaultRetry: 5). */
  readonly attempts?: number;
  /** Pause between attempts (client-go: 10 ms). */
  readonly delayMs?: number;
  readonly clock?: Clock;
  readonly signal?: AbortSignal;
}

/**
 * Runs `fn` again while it fails with ConflictError (client-go's retry.RetryOnConflict): `fn` must
 * re-read the object each time, so that it applies its change to the latest version. Other errors,
 * and the last conflict, are thrown.
 */
export async function retryOnConflict<R>(fn: () => Promise<R>, o: RetryOptions = {}): Promise<R> {
  const attempts = Math.max(1, o.attempts ?? 5);
  const clock = o.clock ?? realClock;
  for (let i = 1; ; i++) {
    try {
      return await fn();
    } catch (e) {
      if (!(e instanceof ConflictError) || i >= attempts) throw e;
      await clock.sleep(o.delayMs ?? 10, o.signal);
    }
  }
}
