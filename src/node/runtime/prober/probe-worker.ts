/**
 * One probe worker's decisions, the kubelet's worker.doProbe as pure functions: whether to probe
 * this tick, and what a probe's outcome does to the cached result (thresholds, hold after a
 * liveness or startup failure until the container is replaced).
 */
import type { Probe } from 'kubernetes-types/core/v1.js';
import type { ProbeResult } from './handlers.js';

export const PROBE_KINDS = ['startup', 'liveness', 'readiness'] as const;
export type ProbeKind = (typeof PROBE_KINDS)[number];

/** The cached result the rest of the kubelet reads; `unknown` until a startup probe decides. */
export type CachedResult = ProbeResult | 'unknown';

/** Probe fields with the API's defaults. */
export interface ProbeTiming {
  readonly initialDelaySeconds: number;
  readonly periodSeconds: number;
  readonly timeoutSeconds: number;
  readonly successThreshold: number;
  readonly failureThreshold: number;
}

export function probeTiming(p: Probe): ProbeTiming {
  return {
    initialDelaySeconds: p.initialDelaySeconds ?? 0,
    periodSeconds: p.periodSeconds ?? 10,
    timeoutSeconds: p.timeoutSeconds ?? 1,
    successThreshold: p.successThreshold ?? 1,
    failureThreshold: p.failureThreshold ?? 3,
  };
}

/** The result a new container starts with: not ready, alive, not yet started. */
export function initialResult(kind: ProbeKind): CachedResult {
  return kind === 'readiness' ? 'failure' : kind === 'liveness' ? 'success' : 'unknown';
}

export interface WorkerState {
  /** The container the state is about; a new one resets it. */
  readonly containerId: string;
  readonly result: CachedResult;
  readonly lastOutcome?: ProbeResult;
  /** Consecutive outcomes equal to lastOutcome. */
  readonly run: number;
  /** Set after a liveness/startup failure: no probing until the container is replaced. */
  readonly onHold: boolean;
}

export function newWorkerState(kind: ProbeKind, containerId: string): WorkerState {
  return { containerId, result: initialResult(kind), run: 0, onHold: false };
}

/** What the worker sees of its container this tick. */
export interface ContainerView {
  readonly id: string;
  readonly running: boolean;
  readonly startedAtMs: number;
  /** The startup probe has passed (or there is none). */
  readonly started: boolean;
}

export type Tick =
  | { readonly kind: 'wait' } // nothing to do this tick; result unchanged
  | { readonly kind: 'set'; readonly state: WorkerState } // result set without probing (new or stopped container)
  | { readonly kind: 'probe'; readonly state: WorkerState };

/** Whether this tick probes (kubelet's doProbe up to running the prober). */
export function decideTick(
  kind: ProbeKind,
  timing: ProbeTiming,
  s: WorkerState | undefined,
  c: ContainerView | undefined,
  nowMs: number,
): Tick {
  if (!c) return { kind: 'wait' };
  let state = s && s.containerId === c.id ? s : newWorkerState(kind, c.id);
  const replaced = state !== s;
  if (state.onHold) return { kind: 'wait' };
  if (!c.running) {
    // A stopped container is not ready/alive; it is not probed.
    state = { ...state, result: 'failure', run: 0 };
    return s?.result === state.result && !replaced ? { kind: 'wait' } : { kind: 'set', state };
  }
  // Liveness and readiness wait for the startup probe; the startup probe stops once it passed.
  if (
    (kind !== 'startup' && !c.started) ||
    (kind === 'startup' && c.started) ||
    nowMs - c.startedAtMs < timing.initialDelaySeconds * 1000
  ) {
    return replaced ? { kind: 'set', state } : { kind: 'wait' };
  }
  return { kind: 'probe', state };
}

/** The state after an outcome: the cached result flips only after `threshold` equal outcomes in a row. */
export function applyOutcome(kind: ProbeKind, timing: ProbeTiming, s: WorkerState, outcome: ProbeResult): WorkerState {
  const run = s.lastOutcome === outcome ? s.run + 1 : 1;
  const threshold = outcome === 'failure' ? timing.failureThreshold : timing.successThreshold;
  if (run < threshold) return { ...s, lastOutcome: outcome, run };
  const next = { ...s, lastOutcome: outcome, run, result: outcome };
  // The kubelet kills a container whose liveness/startup probe failed and stops probing it until
  // it is replaced; the run starts over so the next container gets a full failureThreshold.
  if (outcome === 'failure' && kind !== 'readiness') return { ...next, run: 0, onHold: true };
  return next;
}

/** Capitalised as in the kubelet's event texts ("Liveness probe failed: …"). */
export function probeTitle(kind: ProbeKind): string {
  return kind === 'startup' ? 'Startup' : kind === 'liveness' ? 'Liveness' : 'Readiness';
}

/** A container's `started` and `ready` from its cached results (the kubelet's UpdatePodStatus). */
export function containerProbeStatus(o: {
  running: boolean;
  hasStartup: boolean;
  hasReadiness: boolean;
  startup: CachedResult | undefined;
  readiness: CachedResult | undefined;
}): { started: boolean; ready: boolean } {
  if (!o.running) return { started: false, ready: false };
  const started = !o.hasStartup || o.startup === 'success';
  const ready = started && (!o.hasReadiness || o.readiness === 'success');
  return { started, ready };
}
