/**
 * What to do with one pod's sandbox and containers, decided from its spec and what the runtime
 * reports — the kubelet's computePodActions (kuberuntime_manager.go). Pure: SyncPod only executes.
 */
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import { backoffDelay, type BackoffPolicy } from '../../util/backoff.js';

export type RuntimeContainerState = 'created' | 'running' | 'exited' | 'unknown';

/** One sandbox of the pod as the runtime lists it. */
export interface SandboxInfo {
  readonly id: string;
  readonly ready: boolean;
  readonly attempt: number;
  readonly createdAtMs: number;
}

/** One container of the pod as the runtime reports it (every attempt the runtime still keeps). */
export interface ContainerInfo {
  readonly id: string;
  readonly sandboxId: string;
  readonly name: string;
  readonly attempt: number;
  readonly state: RuntimeContainerState;
  readonly exitCode: number;
  /** The runtime's reason (e.g. OOMKilled), '' when none. */
  readonly reason: string;
  readonly message: string;
  readonly createdAtMs: number;
  readonly startedAtMs: number;
  readonly finishedAtMs: number;
  readonly image: string;
  readonly imageRef: string;
}

export interface RuntimePod {
  readonly sandboxes: readonly SandboxInfo[];
  readonly containers: readonly ContainerInfo[];
}

export interface StartContainer {
  readonly name: string;
  readonly init: boolean;
  /** The attempt number the new container gets (restartCount). */
  readonly attempt: number;
}

export interface PodActions {
  /** Stop every container then the sandbox (pod terminating, finished, or its sandbox is gone). */
  readonly killPod: boolean;
  /** Remove the pod's sandboxes and containers after killPod (the pod is deleted or finished). */
  readonly removePod: boolean;
  readonly createSandbox: boolean;
  /** The sandbox to create containers in (the live one, or the one createSandbox makes). */
  readonly sandboxId?: string;
  readonly sandboxAttempt: number;
  /** The containers to start now, in order (at most one init container). */
  readonly start: readonly StartContainer[];
  /** Containers waiting out their crash-loop backoff: name → ms left. */
  readonly backingOff: ReadonlyMap<string, number>;
  /** Running containers to stop first: not wanted by the spec any more, or unhealthy (then restarted in the same sync). */
  readonly kill: readonly KillContainer[];
}

export interface KillContainer {
  readonly container: ContainerInfo;
  /** The Killing event's message. */
  readonly message: string;
  /** The probe's own terminationGracePeriodSeconds, which overrides the pod's for a probe kill. */
  readonly graceSeconds?: number;
}

/** Running containers whose liveness or startup probe has failed: container id → which probe. */
export type Unhealthy = ReadonlyMap<string, 'liveness' | 'startup'>;

// The kubelet's crash-loop and image-pull backoff (backOffPeriod, MaxContainerBackOff): 10 s, doubling, capped at 5 min.
export const KUBELET_BACKOFF: BackoffPolicy = { initialMs: 10_000, factor: 2, capMs: 300_000 };

/**
 * The wait before restarting a container whose attempt `attempt` (0 = first run) has exited. The
 * kubelet restarts after the first exit at once (its backoff entry is only created then), so the
 * 10 s wait starts with the second exit.
 */
export function crashLoopDelayMs(attempt: number): number {
  return backoffDelay(KUBELET_BACKOFF, attempt);
}

/**
 * The crash-loop wait after the exited attempt `c`, counted from the latest attempt of its
 * container that ran longer than twice the cap (10 min): the kubelet's backoff entry expires then
 * and the next exit is restarted at once, as a first one (flowcontrol.Backoff's hasExpired).
 */
export function crashLoopDelayOf(containers: readonly ContainerInfo[], c: ContainerInfo): number {
  let since = 0;
  for (const x of containers) {
    const stable = x.startedAtMs > 0 && x.finishedAtMs - x.startedAtMs > 2 * KUBELET_BACKOFF.capMs;
    if (x.name === c.name && x.sandboxId === c.sandboxId && x.attempt <= c.attempt && stable)
      since = Math.max(since, x.attempt);
  }
  return crashLoopDelayMs(c.attempt - since);
}

/** The latest attempt of `name` (highest attempt, then newest), or undefined. */
export function latestOf(containers: readonly ContainerInfo[], name: string): ContainerInfo | undefined {
  let best: ContainerInfo | undefined;
  for (const c of containers) {
    if (c.name !== name) continue;
    if (!best || c.attempt > best.attempt || (c.attempt === best.attempt && c.createdAtMs > best.createdAtMs)) best = c;
  }
  return best;
}

/** The attempt before the latest, for lastState. */
export function previousOf(containers: readonly ContainerInfo[], name: string): ContainerInfo | undefined {
  const latest = latestOf(containers, name);
  if (!latest) return undefined;
  return latestOf(
    containers.filter((c) => c.id !== latest.id),
    name,
  );
}

export function restartPolicyOf(pod: Pod): 'Always' | 'OnFailure' | 'Never' {
  const p = pod.spec?.restartPolicy;
  return p === 'OnFailure' || p === 'Never' ? p : 'Always';
}

/** Whether an exited container is to run again under the pod's restart policy. */
export function shouldRestart(pod: Pod, c: ContainerInfo): boolean {
  const policy = restartPolicyOf(pod);
  if (policy === 'Always') return true;
  if (policy === 'OnFailure') return c.exitCode !== 0;
  return false;
}

/** An init container failed and will not run again: the pod has failed (restartPolicy Never). */
export function initFailed(pod: Pod, rt: RuntimePod): boolean {
  if (restartPolicyOf(pod) !== 'Never') return false;
  return (pod.spec?.initContainers ?? []).some((ic) => {
    const c = latestOf(rt.containers, ic.name);
    return c?.state === 'exited' && c.exitCode !== 0;
  });
}

/** Every init container has run to success. */
export function initDone(pod: Pod, rt: RuntimePod): boolean {
  return (pod.spec?.initContainers ?? []).every((ic) => {
    const c = latestOf(rt.containers, ic.name);
    return c?.state === 'exited' && c.exitCode === 0;
  });
}

function liveSandbox(rt: RuntimePod): SandboxInfo | undefined {
  return [...rt.sandboxes].filter((s) => s.ready).sort((a, b) => b.createdAtMs - a.createdAtMs)[0];
}

const running = (c: ContainerInfo | undefined): boolean => c?.state === 'running' || c?.state === 'created';

/**
 * What to do now. `finished` is the pod's phase already being Succeeded or Failed (nothing runs
 * again); `nowMs` is compared with containers' finish times for the crash-loop backoff.
 */
export function computePodActions(
  pod: Pod,
  rt: RuntimePod,
  nowMs: number,
  unhealthy: Unhealthy = new Map(),
): PodActions {
  const none = {
    killPod: false,
    removePod: false,
    createSandbox: false,
    sandboxAttempt: 0,
    start: [],
    backingOff: new Map<string, number>(),
    kill: [],
  };
  const phase = pod.status?.phase;
  if (pod.metadata?.deletionTimestamp) return { ...none, killPod: true, removePod: true };
  if (phase === 'Succeeded' || phase === 'Failed')
    return { ...none, killPod: rt.sandboxes.some((s) => s.ready) || rt.containers.some(running) };

  const sandbox = liveSandbox(rt);
  const policy = restartPolicyOf(pod);
  const containers: readonly Container[] = pod.spec?.containers ?? [];
  const inits: readonly Container[] = pod.spec?.initContainers ?? [];
  const lastAttempt = rt.sandboxes.reduce((m, s) => Math.max(m, s.attempt), -1);

  if (!sandbox) {
    // The kubelet does not make a new sandbox for a Never pod whose containers have already run.
    const ran = rt.containers.some((c) => c.state === 'exited');
    if (ran && policy === 'Never') return { ...none, killPod: rt.containers.some(running) };
    const start =
      inits.length > 0
        ? [{ name: inits[0]!.name, init: true, attempt: 0 }]
        : containers.map((c) => ({ name: c.name, init: false, attempt: 0 }));
    return {
      ...none,
      killPod: rt.sandboxes.length > 0 || rt.containers.length > 0,
      createSandbox: true,
      sandboxAttempt: lastAttempt + 1,
      start,
    };
  }

  const inSandbox = rt.containers.filter((c) => c.sandboxId === sandbox.id);
  const backingOff = new Map<string, number>();
  /** Start `name` again unless its crash-loop backoff has time left. */
  const restart = (c: ContainerInfo, init: boolean): StartContainer[] => {
    const left = c.finishedAtMs + crashLoopDelayOf(inSandbox, c) - nowMs;
    if (left > 0) {
      backingOff.set(c.name, left);
      return [];
    }
    return [{ name: c.name, init, attempt: c.attempt + 1 }];
  };

  // Init containers, one at a time, in order.
  for (const ic of inits) {
    const c = latestOf(inSandbox, ic.name);
    if (!c)
      return {
        ...none,
        sandboxId: sandbox.id,
        sandboxAttempt: sandbox.attempt,
        start: [{ name: ic.name, init: true, attempt: 0 }],
      };
    if (running(c)) return { ...none, sandboxId: sandbox.id, sandboxAttempt: sandbox.attempt };
    if (c.exitCode === 0) continue;
    if (policy === 'Never') return { ...none, killPod: true, sandboxId: sandbox.id, sandboxAttempt: sandbox.attempt };
    return { ...none, sandboxId: sandbox.id, sandboxAttempt: sandbox.attempt, start: restart(c, true), backingOff };
  }

  const start: StartContainer[] = [];
  const kill: KillContainer[] = [];
  for (const spec of containers) {
    const c = latestOf(inSandbox, spec.name);
    const probe = c ? unhealthy.get(c.id) : undefined;
    if (!c) start.push({ name: spec.name, init: false, attempt: 0 });
    else if (c.state === 'exited' && shouldRestart(pod, c)) start.push(...restart(c, false));
    else if (running(c) && probe) {
      // The kubelet restarts a container whose liveness/startup probe failed at once (no crash-loop
      // backoff: the container did not exit) unless the pod never restarts.
      const again = policy !== 'Never';
      const grace = (probe === 'liveness' ? spec.livenessProbe : spec.startupProbe)?.terminationGracePeriodSeconds;
      kill.push({
        container: c,
        message: `Container ${spec.name} failed ${probe} probe${again ? ', will be restarted' : ''}`,
        ...(grace !== undefined ? { graceSeconds: grace } : {}),
      });
      if (again) start.push({ name: spec.name, init: false, attempt: c.attempt + 1 });
    }
  }
  const wanted = new Set(containers.map((c) => c.name));
  for (const c of inSandbox) {
    if (running(c) && !wanted.has(c.name) && !inits.some((i) => i.name === c.name))
      kill.push({ container: c, message: `Stopping container ${c.name}` });
  }
  return { ...none, sandboxId: sandbox.id, sandboxAttempt: sandbox.attempt, start, backingOff, kill };
}
