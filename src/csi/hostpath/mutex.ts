/**
 * One async lock per key: callers with the same key run one after another, in arrival order;
 * different keys run concurrently. Keys are dropped when idle, so the map does not grow.
 */
export class KeyedMutex {
  private readonly tails = new Map<string, Promise<void>>();

  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((r) => (release = r));
    const tail = prev.then(() => mine);
    this.tails.set(key, tail);
    await prev;
    try {
      return await fn();
    } finally {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }

  /** Runs `fn` holding every key (sorted, so two multi-key callers cannot deadlock). */
  async runAll<T>(keys: readonly string[], fn: () => Promise<T>): Promise<T> {
    const sorted = [...new Set(keys)].sort();
    const step = (i: number): Promise<T> => (i === sorted.length ? fn() : this.run(sorted[i]!, () => step(i + 1)));
    return step(0);
  }

  /** Number of keys with a holder or waiters (for tests). */
  get size(): number {
    return this.tails.size;
  }
}
