import type { Clock } from '../util/backoff.js';

interface Sleeper {
  readonly at: number;
  readonly seq: number;
  readonly resolve: () => void;
}

/** Lets pending promise callbacks (including chains of awaits and setImmediate hops) run. */
export async function flushMicrotasks(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise<void>((r) => setImmediate(r));
}

/**
 * A manual Clock for tests: `sleep` resolves only when `advance` moves time past its deadline,
 * in deadline order, letting the woken code run before the next one wakes.
 */
export class FakeClock implements Clock {
  private t: number;
  private seq = 0;
  private sleepers: Sleeper[] = [];

  constructor(startMs = 1_700_000_000_000) {
    this.t = startMs;
  }

  now(): number {
    return this.t;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const s: Sleeper = {
        at: this.t + Math.max(0, ms),
        seq: this.seq++,
        resolve: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      const onAbort = (): void => {
        this.sleepers = this.sleepers.filter((x) => x !== s);
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.sleepers.push(s);
    });
  }

  /** Number of sleeps not yet woken. */
  pending(): number {
    return this.sleepers.length;
  }

  /** Deadlines (absolute ms) of the pending sleeps, soonest first. */
  deadlines(): number[] {
    return this.sleepers.map((s) => s.at).sort((a, b) => a - b);
  }

  /** Moves time forward by `ms` without waking anyone: what a process paused with SIGSTOP sees when it resumes. */
  jump(ms: number): void {
    this.t += ms;
  }

  /** Moves time forward by `ms`, waking due sleepers one deadline at a time. */
  async advance(ms: number): Promise<void> {
    const target = this.t + ms;
    await flushMicrotasks();
    for (;;) {
      const due = this.sleepers.filter((s) => s.at <= target).sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = due[0];
      if (!next) break;
      this.t = Math.max(this.t, next.at);
      const wake = due.filter((s) => s.at === next.at);
      this.sleepers = this.sleepers.filter((s) => !wake.includes(s));
      for (const s of wake) s.resolve();
      await flushMicrotasks();
    }
    this.t = target;
    await flushMicrotasks();
  }
}
