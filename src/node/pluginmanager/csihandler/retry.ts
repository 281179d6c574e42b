import { backoffDelay, type BackoffPolicy, type Clock } from '../../../util/backoff.js';
import { ConflictError, toStowageError } from '../../../util/errors.js';

// client-go's retry.DefaultRetry allows 5 steps; a node agent races only its own loops, so a few
// more cost nothing and avoid a failed registration under load.
export const CONFLICT_RETRIES = 10;

/** Runs `f` again (re-reading inside it) as long as it fails with ConflictError, up to `attempts`. */
export async function retryOnConflict<T>(f: () => Promise<T>, attempts = CONFLICT_RETRIES): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await f();
    } catch (e) {
      if (!(e instanceof ConflictError) || i >= attempts) throw e;
    }
  }
}

/** Retries retryable failures with backoff, `attempts` times in all; stops when `signal` aborts. */
export async function retryWithBackoff<T>(
  f: () => Promise<T>,
  o: { attempts: number; policy: BackoffPolicy; clock: Clock; signal: AbortSignal },
): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await f();
    } catch (e) {
      const err = toStowageError(e);
      if (!err.retryable || i >= o.attempts || o.signal.aborted) throw err;
      await o.clock.sleep(backoffDelay(o.policy, i), o.signal);
    }
  }
}
