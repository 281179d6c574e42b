import { describe, it, expect } from 'vitest';
import { FakeClock, flushMicrotasks } from '../client/fake-clock.test-kit.js';
import type { Logger } from './log.js';
import { newLoop, type LoopOptions } from './loop.js';

function recordingLogger(errors: string[]): Logger {
  const l: Logger = {
    debug() {},
    info() {},
    warn() {},
    error: (m, f) => errors.push(`${m} ${String(f?.['error'])}`),
    child: () => l,
  };
  return l;
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((res) => (resolve = res));
  return { promise, resolve };
}

function setup(o: Partial<LoopOptions> & { body?: LoopOptions['body'] } = {}) {
  const clock = new FakeClock();
  const errors: string[] = [];
  let runs = 0;
  const loop = newLoop({
    name: 'test',
    periodMs: 1_000,
    clock,
    log: recordingLogger(errors),
    ...o,
    body: async (s) => {
      runs++;
      await o.body?.(s);
    },
  });
  const ac = new AbortController();
  const done = loop.run(ac.signal);
  return { clock, loop, errors, runs: () => runs, ac, done };
}

describe('loop', () => {
  it('runs at start, then every period while nobody pokes it', async () => {
    const t = setup();
    await t.loop.ranOnce();
    expect(t.runs()).toBe(1);
    await t.clock.advance(999);
    expect(t.runs()).toBe(1);
    await t.clock.advance(1);
    expect(t.runs()).toBe(2);
    await t.clock.advance(1_000);
    expect(t.runs()).toBe(3);
    t.ac.abort();
    await t.done;
  });

  it('a trigger runs it at once, without waiting for the period', async () => {
    const t = setup();
    await t.loop.ranOnce();
    t.loop.trigger();
    await flushMicrotasks();
    expect(t.runs()).toBe(2);
    // The period starts over after the triggered run.
    await t.clock.advance(999);
    expect(t.runs()).toBe(2);
    await t.clock.advance(1);
    expect(t.runs()).toBe(3);
    t.ac.abort();
    await t.done;
  });

  it('pokes during a run coalesce into one more run; runs never overlap', async () => {
    let gate = deferred();
    let running = 0;
    let maxRunning = 0;
    const t = setup({
      body: async () => {
        running++;
        maxRunning = Math.max(maxRunning, running);
        await gate.promise;
        running--;
      },
    });
    await flushMicrotasks();
    expect(t.runs()).toBe(1);
    for (let i = 0; i < 5; i++) t.loop.trigger();
    await flushMicrotasks();
    expect(t.runs()).toBe(1);
    const first = gate;
    gate = deferred();
    first.resolve();
    await flushMicrotasks();
    expect(t.runs()).toBe(2);
    gate.resolve();
    await flushMicrotasks();
    expect(t.runs()).toBe(2);
    expect(maxRunning).toBe(1);
    t.ac.abort();
    await t.done;
  });

  it('a run that throws is logged and the loop goes on', async () => {
    let n = 0;
    const t = setup({
      body: () => {
        if (n++ === 0) throw new Error('boom');
      },
    });
    await t.loop.ranOnce();
    expect(t.errors).toEqual(['test: run failed boom']);
    t.loop.trigger();
    await flushMicrotasks();
    expect(t.runs()).toBe(2);
    await t.clock.advance(1_000);
    expect(t.runs()).toBe(3);
    expect(t.errors).toHaveLength(1);
    t.ac.abort();
    await t.done;
  });

  it('abort ends the wait at once, lets the run in progress finish and leaves no sleep behind', async () => {
    const gate = deferred();
    let sawAbort = false;
    const t = setup({
      body: async (s) => {
        await gate.promise;
        sawAbort = s.aborted;
      },
    });
    await flushMicrotasks();
    let ended = false;
    void t.done.then(() => (ended = true));
    t.ac.abort();
    await flushMicrotasks();
    expect(ended).toBe(false);
    gate.resolve();
    await t.done;
    expect(sawAbort).toBe(true);
    expect(t.runs()).toBe(1);
    expect(t.clock.pending()).toBe(0);
    t.loop.trigger();
    await t.clock.advance(5_000);
    expect(t.runs()).toBe(1);
  });

  it('abort while waiting ends the loop without another run', async () => {
    const t = setup();
    await t.loop.ranOnce();
    expect(t.clock.pending()).toBe(1);
    t.ac.abort();
    await t.done;
    expect(t.runs()).toBe(1);
    expect(t.clock.pending()).toBe(0);
  });

  it('runAtStart false: the first run waits for a trigger or the period', async () => {
    const t = setup({ runAtStart: false });
    await flushMicrotasks();
    expect(t.runs()).toBe(0);
    await t.clock.advance(1_000);
    expect(t.runs()).toBe(1);
    const u = setup({ runAtStart: false });
    await flushMicrotasks();
    u.loop.trigger();
    await flushMicrotasks();
    expect(u.runs()).toBe(1);
    t.ac.abort();
    u.ac.abort();
    await Promise.all([t.done, u.done]);
  });

  it('starts once', async () => {
    const t = setup();
    await expect(t.loop.run(new AbortController().signal)).rejects.toThrow(/already started/);
    t.ac.abort();
    await t.done;
  });
});
