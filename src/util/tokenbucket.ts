/**
 * client-go's flowcontrol token bucket (NewTokenBucketRateLimiter over x/time/rate), with time
 * passed in so that callers decide on their clock: `burst` tokens to start with, refilled at `qps`
 * per second up to `burst`; each accepted call takes one. A qps of 0 or less is flowcontrol's
 * FakeNeverRateLimiter: it never accepts.
 */
// Refills are fractions of a token: a token due at readyAt must be there despite rounding.
const EPSILON = 1e-9;

export class TokenBucket {
  private tokens: number;
  private atMs: number;

  constructor(
    readonly qps: number,
    readonly burst: number,
    nowMs: number,
  ) {
    this.tokens = qps > 0 ? burst : 0;
    this.atMs = nowMs;
  }

  /** Takes a token if one is there at `nowMs` (flowcontrol's TryAccept). */
  tryAccept(nowMs: number): boolean {
    if (this.qps <= 0) return false;
    this.refill(nowMs);
    if (this.tokens < 1 - EPSILON) return false;
    this.tokens = Math.max(0, this.tokens - 1);
    return true;
  }

  /** When the next token is there (≤ nowMs: now); undefined when it never will be. */
  readyAt(nowMs: number): number | undefined {
    if (this.qps <= 0) return undefined;
    this.refill(nowMs);
    return this.tokens >= 1 - EPSILON ? nowMs : nowMs + Math.ceil(((1 - this.tokens) * 1000) / this.qps);
  }

  private refill(nowMs: number): void {
    if (nowMs <= this.atMs) return;
    this.tokens = Math.min(this.burst, this.tokens + ((nowMs - this.atMs) * this.qps) / 1000);
    this.atMs = nowMs;
  }
}
