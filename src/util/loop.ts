import { realClock, type Clock } from './backoff.js';
import { toStowageError } from './errors.js';
import { newLogger, type Logger } from './log.js';

/**
 * A level-triggered loop: `body` runs soon after a `trigger()` (pokes coalesce: any number during
 * a run or a wait cause one more run) and at least every `periodMs` (the safety net), one run at a
 * time, until the signal given to `run` aborts. A run that throws is logged; the loop goes on.
 */
export interface Loop {
  /** Asks for a run as soon as possible; calls coalesce. Before `run`, the first run covers it. */
  trigger(): void;
  /** Runs until `signal` aborts (the run in progress finishes first). Starts once. */
  run(signal: AbortSignal): Promise<void>;
  /** Resolves once the first run has ended (or `run` returned without one). */
  ranOnce(): Promise<void>;
}

export interface LoopOptions {
  /** Names the loop in logs. */
  readonly name: string;
  readonly body: (signal: AbortSignal) => void | Promise<void>;
  readonly periodMs: number;
  /** False: the first run waits for a trigger or a period (a monitor that has just checked). Default true. */
  readonly runAtStart?: boolean;
  readonly clock?: Clock;
  readonly log?: Logger;
}

export function newLoop(o: LoopOptions): Loop {
  const clock = o.clock ?? realClock;
  const log = o.log ?? newLogger(o.name);
  let wanted = o.runAtStart ?? true;
  let wake: (() => void) | undefined;
  let started = false;
  let firstRunEnded!: () => void;
  const firstRun = new Promise<void>((resolve) => (firstRunEnded = resolve));

  const trigger = (): void => {
    wanted = true;
    wake?.();
  };

  /** Until a trigger, the period or the abort, whichever comes first (resolves, never rejects). */
  const wait = (signal: AbortSignal): Promise<void> => {
    const tick = new AbortController();
    return new Promise<void>((resolve) => {
      const done = (): void => {
        wake = undefined;
        signal.removeEventListener('abort', done);
        tick.abort(); // a trigger or the abort won: drop the period's sleep
        resolve();
      };
      wake = done;
      signal.addEventListener('abort', done, { once: true });
      clock.sleep(o.periodMs, tick.signal).then(done, () => undefined);
    });
  };

  /** Calls a synchronous body without a hop through the microtask queue: a trigger runs it at once. */
  const runOnce = (signal: AbortSignal): Promise<void> | undefined => {
    const failed = (e: unknown): void => {
      if (!signal.aborted) log.error(`${o.name}: run failed`, { error: toStowageError(e).message });
    };
    try {
      const r = o.body(signal);
      return r ? r.catch(failed) : undefined;
    } catch (e) {
      failed(e);
      return undefined;
    }
  };

  const run = async (signal: AbortSignal): Promise<void> => {
    if (started) throw new Error(`${o.name}: loop already started`);
    started = true;
    try {
      if (!wanted && !signal.aborted) await wait(signal);
      while (!signal.aborted) {
        wanted = false;
        const t0 = clock.now();
        const running = runOnce(signal);
        if (running) await running;
        firstRunEnded();
        if (signal.aborted) break;
        if (!wanted) {
          await wait(signal);
          continue;
        }
        // Poked during the run: go again soon, but rest at least as long as the run took, so that
        // back-to-back runs under a stream of pokes leave the event loop to the work they started.
        const rest = clock.now() - t0;
        if (rest >= 1) await clock.sleep(rest, signal).catch(() => undefined);
        else await new Promise<void>((r) => setImmediate(r));
      }
    } finally {
      firstRunEnded();
    }
  };

  return { trigger, run, ranOnce: () => firstRun };
}
