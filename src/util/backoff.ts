/**
 * Exponential backoff: Kubernetes' volume and plugin operations start at 500 ms and double up to
 * a cap (2m2s upstream; Stowage defaults lower, see DEFAULT_BACKOFF).
 */
export interface BackoffPolicy {
  readonly initialMs: number;
  readonly factor: number;
  readonly capMs: number;
}

// 500 ms initial and doubling as Kubernetes' exponentialbackoff package; the cap is ours (upstream 2m2s).
export const DEFAULT_BACKOFF: BackoffPolicy = { initialMs: 500, factor: 2, capMs: 30_000 };

/** Delay before retry number `failures` (1 = first retry). */
export function backoffDelay(policy: BackoffPolicy, failures: number): number {
  if (failures <= 0) return 0;
  const d = policy.initialMs * Math.pow(policy.factor, failures - 1);
  return Math.min(d, policy.capMs);
}

export interface Clock {
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/**
 * The wall clock. `sleep` resolves only once `now()` has reached its deadline: Node's timers run
 * on a monotonic clock rounded to the loop's millisecond and may fire up to a millisecond before
 * Date.now() says the delay has passed, and a caller that then checks `now() < deadline` (the
 * executor's backoff) would find itself still backing off with no timer left to wake it.
 */
export const realClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const deadline = Date.now() + ms;
      let t: NodeJS.Timeout;
      const arm = (delay: number): void => {
        t = setTimeout(() => {
          const left = deadline - Date.now();
          if (left > 0) return arm(left);
          signal?.removeEventListener('abort', onAbort);
          resolve();
        }, delay);
      };
      const onAbort = (): void => {
        clearTimeout(t);
        reject(signal?.reason);
      };
      arm(ms);
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
};
