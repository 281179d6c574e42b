/**
 * Bounds concurrent driver calls, lower `priority` first, FIFO within a priority. With a burst of
 * pods, publishing (which finishes a pod) goes before staging more volumes, so pods become ready
 * one after another instead of all at the end; the driver's own work does not shrink.
 */
export class PriorityLimiter {
  private running = 0;
  private seq = 0;
  private readonly waiting: Array<{ priority: number; seq: number; start: () => void }> = [];

  constructor(private readonly max: number) {}

  async run<T>(priority: number, fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (this.running >= this.max) {
      await new Promise<void>((resolve, reject) => {
        const w = {
          priority,
          seq: this.seq++,
          start: () => {
            signal?.removeEventListener('abort', onAbort);
            resolve();
          },
        };
        const onAbort = (): void => {
          const i = this.waiting.indexOf(w);
          if (i >= 0) this.waiting.splice(i, 1);
          reject(signal?.reason);
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        this.waiting.push(w);
        this.waiting.sort((a, b) => a.priority - b.priority || a.seq - b.seq);
      });
    } else this.running++;
    try {
      return await fn();
    } finally {
      const next = this.waiting.shift();
      if (next)
        next.start(); // the slot passes on
      else this.running--;
    }
  }
}

/** Call priorities: finishing a pod first, then new stagings, then teardown. */
export const CALL_PRIORITY = { publish: 0, stage: 1, teardown: 2 } as const;
