/**
 * A sorted sequence kept as a list of sorted chunks (at most CHUNK items each), so an insertion or
 * removal moves at most one chunk instead of the whole array: O(log n + CHUNK) per update.
 */
const CHUNK = 256;

/** `K` is the sort key shape; probes for `findFrom` need only that shape. */
export class SortedChunks<T extends K, K> {
  private readonly chunks: T[][] = [];
  private count = 0;

  constructor(private readonly cmp: (a: K, b: K) => number) {}

  get length(): number {
    return this.count;
  }

  /** Index of the first chunk whose last item is ≥ key (chunks.length when none). */
  private chunkFor(key: K): number {
    let lo = 0;
    let hi = this.chunks.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const c = this.chunks[mid] as T[];
      if (this.cmp(c[c.length - 1] as T, key) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private lowerIn(c: readonly T[], key: K): number {
    let lo = 0;
    let hi = c.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.cmp(c[mid] as T, key) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  insert(item: T): void {
    this.count++;
    if (this.chunks.length === 0) {
      this.chunks.push([item]);
      return;
    }
    const ci = Math.min(this.chunkFor(item), this.chunks.length - 1);
    const c = this.chunks[ci] as T[];
    c.splice(this.lowerIn(c, item), 0, item);
    if (c.length > 2 * CHUNK) this.chunks.splice(ci + 1, 0, c.splice(CHUNK));
  }

  /** Remove this exact item (by identity, scanning items with an equal key); returns whether it was there. */
  remove(item: T): boolean {
    for (let ci = this.chunkFor(item); ci < this.chunks.length; ci++) {
      const c = this.chunks[ci] as T[];
      for (let i = this.lowerIn(c, item); i < c.length; i++) {
        const cur = c[i] as T;
        if (cur === item) {
          c.splice(i, 1);
          if (c.length === 0) this.chunks.splice(ci, 1);
          this.count--;
          return true;
        }
        if (this.cmp(cur, item) !== 0) return false;
      }
    }
    return false;
  }

  /** Visit items ≥ key in order until `visit` returns true; returns that item or undefined. */
  findFrom(key: K, visit: (item: T) => boolean): T | undefined {
    const first = this.chunkFor(key);
    for (let ci = first; ci < this.chunks.length; ci++) {
      const c = this.chunks[ci] as T[];
      for (let i = ci === first ? this.lowerIn(c, key) : 0; i < c.length; i++) {
        const item = c[i] as T;
        if (visit(item)) return item;
      }
    }
    return undefined;
  }

  toArray(): T[] {
    return this.chunks.flat();
  }
}
