/**
 * One zone's NoExecute tainting queue (kube's scheduler.RateLimitedTimedQueue): node names in the
 * order they are due, each at most once until removed, handed out only as fast as the zone's token
 * bucket allows (burst 1, kube's EvictionRateLimiterBurst). Time comes from the caller.
 */
import { TokenBucket } from '../../util/tokenbucket.js';

/** kube's EvictionRateLimiterBurst. */
const EVICTION_BURST = 1;

interface Entry {
  readonly node: string;
  readonly processAt: number;
  readonly seq: number;
}

export class ZoneTaintQueue {
  private limiter: TokenBucket;
  private queued: Entry[] = [];
  /** Queued or handed out and not removed since: such a node is not added again (kube's UniqueQueue set). */
  private readonly known = new Set<string>();
  private seq = 0;

  constructor(qps: number, nowMs: number) {
    this.limiter = new TokenBucket(qps, EVICTION_BURST, nowMs);
  }

  get qps(): number {
    return this.limiter.qps;
  }

  /** Queues `node` due now; false (and nothing changes) when it is already known. */
  add(node: string, nowMs: number): boolean {
    if (this.known.has(node)) return false;
    this.known.add(node);
    this.insert({ node, processAt: nowMs, seq: this.seq++ });
    return true;
  }

  /** Forgets `node`: it is not handed out, and may be added again. True when it was known. */
  remove(node: string): boolean {
    this.queued = this.queued.filter((e) => e.node !== node);
    return this.known.delete(node);
  }

  /**
   * kube's SwapLimiter: a different rate gets a fresh bucket, drained when the old one had no token
   * left (so that a swap never grants an extra taint); 0 stops the queue.
   */
  swapLimiter(qps: number, nowMs: number): void {
    if (qps === this.limiter.qps) return;
    const next = new TokenBucket(qps, EVICTION_BURST, nowMs);
    if (qps > 0 && !this.limiter.tryAccept(nowMs)) next.tryAccept(nowMs);
    this.limiter = next;
  }

  /**
   * The nodes to taint now, one token each (kube's Try: a token is spent before the head's due time
   * is checked). A node handed out stays known: call `retry` when its taint could not be written.
   */
  take(nowMs: number): string[] {
    const out: string[] = [];
    for (let head = this.queued[0]; head; head = this.queued[0]) {
      if (!this.limiter.tryAccept(nowMs) || head.processAt > nowMs) break;
      this.queued.shift();
      out.push(head.node);
    }
    return out;
  }

  /** Puts back a node handed out by `take` to be tried again at `atMs`, unless it was removed meanwhile. */
  retry(node: string, atMs: number): void {
    if (!this.known.has(node) || this.queued.some((e) => e.node === node)) return;
    this.insert({ node, processAt: atMs, seq: this.seq++ });
  }

  /** When `take` may next hand out a node; undefined when nothing is queued or the rate is 0. */
  nextAt(nowMs: number): number | undefined {
    const head = this.queued[0];
    if (!head) return undefined;
    const token = this.limiter.readyAt(nowMs);
    return token === undefined ? undefined : Math.max(token, head.processAt);
  }

  private insert(e: Entry): void {
    const i = this.queued.findIndex((x) => x.processAt > e.processAt || (x.processAt === e.processAt && x.seq > e.seq));
    if (i < 0) this.queued.push(e);
    else this.queued.splice(i, 0, e);
  }
}
