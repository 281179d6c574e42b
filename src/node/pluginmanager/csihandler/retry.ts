import { backoffDelay, type BackoffPolicy, type Clock } from '../../../util/backoff.js';
import { toStowageError } from '../../../util/errors.js';

// Attempts of a batch that lost a race with another writer. client-go's retry.DefaultRetry allows
// 5 steps; a few more cost nothing and avoid a failed registration under load.
export const CONFLICT_RETRIES = 10;

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
