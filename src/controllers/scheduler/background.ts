/**
 * Runs async tasks beside the caller with at most `limit` in flight: `run` resolves once the task
 * has started (waiting for a free slot first), `idle` once every started task has settled. Tasks
 * must handle their own errors; a rejection is swallowed here so it can never go unhandled.
 */
export interface BoundedRunner {
  run(task: () => Promise<void>): Promise<void>;
  idle(): Promise<void>;
  inFlight(): number;
}

export function newBoundedRunner(limit: number): BoundedRunner {
  const running = new Set<Promise<void>>();
  const waiters: Array<() => void> = [];
  return {
    async run(task) {
      while (running.size >= limit) await new Promise<void>((r) => waiters.push(r));
      const p: Promise<void> = task()
        .catch(() => undefined)
        .finally(() => {
          running.delete(p);
          waiters.shift()?.();
        });
      running.add(p);
    },
    async idle() {
      while (running.size > 0) await Promise.allSettled([...running]);
    },
    inFlight: () => running.size,
  };
}
