/**
 * kube's failedPodsBackoff (flowcontrol.Backoff, 1 s doubling to 15 min) keyed by set, generation
 * and node: a failed daemon pod is killed and re-created no faster than this, so a node whose
 * kubelet keeps rejecting the pod is not hot-looped. An entry idle for twice the cap starts over (and is dropped).
 */
export const FAILED_POD_BACKOFF_INITIAL_MS = 1000;
export const FAILED_POD_BACKOFF_MAX_MS = 15 * 60_000;

export interface FailedPodBackoff {
  /** ms left before the next kill on `key` is allowed; undefined when not backing off. */
  remaining(key: string, now: number): number | undefined;
  /** Records a kill on `key` now: the next one waits twice as long as the last (up to the cap). */
  next(key: string, now: number): void;
}

export function newFailedPodBackoff(
  initialMs = FAILED_POD_BACKOFF_INITIAL_MS,
  maxMs = FAILED_POD_BACKOFF_MAX_MS,
): FailedPodBackoff {
  const entries = new Map<string, { delay: number; at: number }>();
  return {
    remaining(key, now) {
      const e = entries.get(key);
      if (!e) return undefined;
      const left = e.at + e.delay - now;
      return left > 0 ? left : undefined;
    },
    next(key, now) {
      // Entries idle for twice the cap start over anyway: dropped here (kube's periodic GC), so gone sets leave nothing.
      for (const [k, x] of entries) if (now - x.at > 2 * maxMs) entries.delete(k);
      const e = entries.get(key);
      const delay = !e || now - e.at > 2 * maxMs ? initialMs : Math.min(e.delay * 2, maxMs);
      entries.set(key, { delay, at: now });
    },
  };
}
