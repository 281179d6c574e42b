import { describe, expect, it } from 'vitest';
import {
  applyOutcome,
  containerProbeStatus,
  decideTick,
  newWorkerState,
  probeTiming,
  type ContainerView,
  type ProbeKind,
  type WorkerState,
} from './probe-worker.js';
import type { ProbeResult } from './handlers.js';

const T0 = 1_000_000;
const timing = probeTiming({ periodSeconds: 1, failureThreshold: 3, successThreshold: 2, initialDelaySeconds: 5 });
const running = (o: Partial<ContainerView> = {}): ContainerView => ({
  id: 'c1',
  running: true,
  startedAtMs: T0,
  started: true,
  ...o,
});

/** Feeds outcomes through applyOutcome, returning the cached result after each. */
function results(kind: ProbeKind, outcomes: ProbeResult[]): string[] {
  let s: WorkerState = newWorkerState(kind, 'c1');
  return outcomes.map((o) => (s = applyOutcome(kind, timing, s, o)).result);
}

describe('probe worker', () => {
  it('defaults as the API does', () => {
    expect(probeTiming({})).toEqual({
      initialDelaySeconds: 0,
      periodSeconds: 10,
      timeoutSeconds: 1,
      successThreshold: 1,
      failureThreshold: 3,
    });
  });

  it.each([
    { kind: 'readiness' as const, outcomes: ['success', 'success'] as ProbeResult[], want: ['failure', 'success'] },
    {
      kind: 'readiness' as const,
      outcomes: ['success', 'failure', 'success', 'success'] as ProbeResult[],
      want: ['failure', 'failure', 'failure', 'success'],
    },
    {
      kind: 'liveness' as const,
      outcomes: ['failure', 'failure', 'failure'] as ProbeResult[],
      want: ['success', 'success', 'failure'],
    },
    {
      kind: 'liveness' as const,
      outcomes: ['failure', 'failure', 'success', 'failure'] as ProbeResult[],
      want: ['success', 'success', 'success', 'success'],
    },
    {
      kind: 'startup' as const,
      outcomes: ['failure', 'success', 'success'] as ProbeResult[],
      want: ['unknown', 'unknown', 'success'],
    },
  ])('$kind: $outcomes → $want (success threshold 2, failure threshold 3)', ({ kind, outcomes, want }) => {
    expect(results(kind, outcomes)).toEqual(want);
  });

  it('a liveness failure puts the worker on hold until the container is replaced', () => {
    let s = newWorkerState('liveness', 'c1');
    for (let i = 0; i < 3; i++) s = applyOutcome('liveness', timing, s, 'failure');
    expect(s).toMatchObject({ result: 'failure', onHold: true, run: 0 });
    expect(decideTick('liveness', timing, s, running({ startedAtMs: 0 }), T0)).toEqual({ kind: 'wait' });
    const next = decideTick('liveness', timing, s, running({ id: 'c2', startedAtMs: 0 }), T0);
    expect(next).toEqual({ kind: 'probe', state: newWorkerState('liveness', 'c2') });
  });

  it.each([
    { name: 'no container yet', kind: 'readiness' as const, c: undefined, want: 'wait' },
    {
      name: 'in the initial delay (new container: result reset)',
      kind: 'readiness' as const,
      c: running(),
      now: T0 + 4_000,
      want: 'set',
    },
    { name: 'after the initial delay', kind: 'readiness' as const, c: running(), now: T0 + 5_000, want: 'probe' },
    {
      name: 'liveness waits for the startup probe',
      kind: 'liveness' as const,
      c: running({ started: false, startedAtMs: 0 }),
      want: 'set',
    },
    {
      name: 'the startup probe stops once started',
      kind: 'startup' as const,
      c: running({ startedAtMs: 0 }),
      want: 'set',
    },
    {
      name: 'the startup probe runs before',
      kind: 'startup' as const,
      c: running({ started: false, startedAtMs: 0 }),
      want: 'probe',
    },
  ])('$name → $want', ({ kind, c, now, want }) => {
    expect(decideTick(kind, timing, undefined, c, now ?? T0).kind).toBe(want);
  });

  it('a stopped container is not ready and not probed', () => {
    const ready: WorkerState = { containerId: 'c1', result: 'success', run: 2, lastOutcome: 'success', onHold: false };
    expect(decideTick('readiness', timing, ready, running({ running: false }), T0 + 10_000)).toEqual({
      kind: 'set',
      state: { ...ready, result: 'failure', run: 0 },
    });
  });

  it.each([
    {
      name: 'not running',
      o: { running: false, hasStartup: false, hasReadiness: false },
      want: { started: false, ready: false },
    },
    {
      name: 'no probes',
      o: { running: true, hasStartup: false, hasReadiness: false },
      want: { started: true, ready: true },
    },
    {
      name: 'startup pending',
      o: { running: true, hasStartup: true, hasReadiness: false, startup: 'unknown' as const },
      want: { started: false, ready: false },
    },
    {
      name: 'started, readiness failing',
      o: {
        running: true,
        hasStartup: true,
        hasReadiness: true,
        startup: 'success' as const,
        readiness: 'failure' as const,
      },
      want: { started: true, ready: false },
    },
    {
      name: 'started and ready',
      o: {
        running: true,
        hasStartup: true,
        hasReadiness: true,
        startup: 'success' as const,
        readiness: 'success' as const,
      },
      want: { started: true, ready: true },
    },
  ])('status: $name', ({ o, want }) => {
    expect(containerProbeStatus({ startup: undefined, readiness: undefined, ...o })).toEqual(want);
  });
});
