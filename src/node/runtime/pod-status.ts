/**
 * The pod's status from what the runtime reports — the kubelet's convertToAPIContainerStatuses and
 * getPhase. Pure.
 */
import type { Container, ContainerState, ContainerStatus, Pod, PodCondition } from 'kubernetes-types/core/v1.js';
import { metaTime } from '../../util/metatime.js';
import {
  initDone,
  initFailed,
  latestOf,
  previousOf,
  restartPolicyOf,
  shouldRestart,
  type ContainerInfo,
  type RuntimePod,
} from './pod-actions.js';

/** Why a container is waiting, as the last sync found (image pulls, crash-loop backoff, config errors). */
export interface Waiting {
  readonly reason: string;
  readonly message: string;
}

const CONTAINER_ID_PREFIX = 'containerd://';

function terminated(c: ContainerInfo): ContainerState {
  // The kubelet: exit 0 is Completed, otherwise Error, unless the runtime names a reason (OOMKilled).
  const reason = c.reason !== '' ? c.reason : c.exitCode === 0 ? 'Completed' : 'Error';
  return {
    terminated: {
      exitCode: c.exitCode,
      reason,
      ...(c.message !== '' ? { message: c.message } : {}),
      startedAt: c.startedAtMs > 0 ? metaTime(c.startedAtMs) : undefined,
      finishedAt: c.finishedAtMs > 0 ? metaTime(c.finishedAtMs) : undefined,
      containerID: `${CONTAINER_ID_PREFIX}${c.id}`,
    },
  };
}

/** A running container's `started` and `ready` from its probes; without probes both follow running. */
export type ProbeStatus = (
  spec: Container,
  containerId: string,
  running: boolean,
) => { started: boolean; ready: boolean };

const noProbes: ProbeStatus = (_s, _id, running) => ({ started: running, ready: running });

function containerStatus(
  pod: Pod,
  spec: Container,
  rt: RuntimePod,
  waiting: ReadonlyMap<string, Waiting>,
  sandboxId: string | undefined,
  notStarted: string,
  probes: ProbeStatus,
): ContainerStatus {
  const all = rt.containers;
  const latest = latestOf(all, spec.name);
  const prev = previousOf(all, spec.name);
  const w = waiting.get(spec.name);
  const base = {
    name: spec.name,
    image: spec.image ?? '',
    imageID: latest?.imageRef ?? '',
    restartCount: latest?.attempt ?? 0,
  };
  let state: ContainerState;
  let lastState: ContainerState = {};
  if (latest?.state === 'running') {
    state = { running: { startedAt: metaTime(latest.startedAtMs) } };
    if (prev) lastState = terminated(prev);
  } else if (latest?.state === 'exited') {
    const again = shouldRestart(pod, latest) && latest.sandboxId === sandboxId;
    if (again && w) {
      state = { waiting: { reason: w.reason, message: w.message } };
      lastState = terminated(latest);
    } else state = terminated(latest);
    if (!again && prev) lastState = terminated(prev);
  } else {
    state = { waiting: { reason: w?.reason ?? notStarted, ...(w?.message ? { message: w.message } : {}) } };
    if (prev) lastState = terminated(prev);
  }
  const isRunning = state.running !== undefined;
  const { started, ready } = latest ? probes(spec, latest.id, isRunning) : { started: false, ready: false };
  return {
    ...base,
    ...(latest ? { containerID: `${CONTAINER_ID_PREFIX}${latest.id}` } : {}),
    state,
    lastState,
    ready,
    started,
  };
}

export interface PodStatusInput {
  readonly pod: Pod;
  readonly rt: RuntimePod;
  readonly waiting: ReadonlyMap<string, Waiting>;
  /** The live sandbox, if any. */
  readonly sandboxId?: string;
  /** The node's address: pods run on the host network. */
  readonly hostIP?: string;
  readonly nowMs: number;
  /** Probe results (default: no probes). */
  readonly probes?: ProbeStatus;
}

/** The kubelet's getPhase over the containers' statuses. */
export function podPhase(
  pod: Pod,
  statuses: readonly ContainerStatus[],
  rt: RuntimePod,
): 'Pending' | 'Running' | 'Succeeded' | 'Failed' {
  if (initFailed(pod, rt)) return 'Failed';
  if (!initDone(pod, rt)) return 'Pending';
  let running = 0;
  let waiting = 0;
  let stopped = 0;
  let succeeded = 0;
  for (const s of statuses) {
    if (s.state?.running) running++;
    else if (s.state?.terminated) {
      stopped++;
      if (s.state.terminated.exitCode === 0) succeeded++;
    } else if (s.state?.waiting) {
      if (s.lastState?.terminated) stopped++;
      else waiting++;
    }
  }
  if (waiting > 0) return 'Pending';
  if (running > 0) return 'Running';
  if (stopped > 0) {
    const policy = restartPolicyOf(pod);
    if (policy === 'Always') return 'Running';
    if (stopped === succeeded) return 'Succeeded';
    if (policy === 'OnFailure') return 'Running';
    return 'Failed';
  }
  return 'Pending';
}

function condition(
  pod: Pod,
  type: string,
  ok: boolean,
  nowIso: string,
  reason?: string,
  message?: string,
): PodCondition {
  const prev = pod.status?.conditions?.find((c) => c.type === type);
  const status = ok ? 'True' : 'False';
  return {
    type,
    status,
    lastTransitionTime: prev?.status === status && prev.lastTransitionTime ? prev.lastTransitionTime : nowIso,
    ...(reason && !ok ? { reason } : {}),
    ...(message && !ok ? { message } : {}),
  };
}

/** The status subresource to write for the pod. */
export function runtimePodStatus(i: PodStatusInput): Record<string, unknown> {
  const { pod, rt } = i;
  const nowIso = metaTime(i.nowMs);
  // The kubelet's waiting reason for a container not started yet: PodInitializing while init
  // containers run, ContainerCreating after.
  const initialized = initDone(pod, rt);
  const notStarted = initialized ? 'ContainerCreating' : 'PodInitializing';
  const initPod = {
    ...pod,
    spec: { ...pod.spec!, restartPolicy: restartPolicyOf(pod) === 'Always' ? 'OnFailure' : restartPolicyOf(pod) },
  };
  const initStatuses = (pod.spec?.initContainers ?? [])
    .map((c) => containerStatus(initPod, c, rt, i.waiting, i.sandboxId, 'PodInitializing', noProbes))
    // An init container that completed is ready: it will not run again (kubelet_pods.go).
    .map((s) => (s.state?.terminated?.exitCode === 0 ? { ...s, ready: true } : s));
  const statuses = (pod.spec?.containers ?? []).map((c) =>
    containerStatus(pod, c, rt, i.waiting, i.sandboxId, notStarted, i.probes ?? noProbes),
  );
  const phase = podPhase(pod, statuses, rt);
  const allReady = statuses.length > 0 && statuses.every((s) => s.ready);
  const finished = phase === 'Succeeded' || phase === 'Failed';
  const notReadyReason = finished ? 'PodCompleted' : 'ContainersNotReady';
  const unready = statuses.filter((c) => !c.ready).map((c) => c.name);
  const notReadyMessage = finished ? undefined : `containers with unready status: [${unready.join(' ')}]`;
  const incomplete = initStatuses
    .filter((c) => !c.state?.terminated || c.state.terminated.exitCode !== 0)
    .map((c) => c.name);
  // In the kubelet's order (PodScheduled, the scheduler's, kept last); PodReadyToStartContainers
  // says the sandbox is up.
  const conditions = [
    condition(pod, 'PodReadyToStartContainers', i.sandboxId !== undefined, nowIso),
    condition(
      pod,
      'Initialized',
      initialized,
      nowIso,
      'ContainersNotInitialized',
      `containers with incomplete status: [${incomplete.join(' ')}]`,
    ),
    condition(pod, 'Ready', allReady && !finished, nowIso, notReadyReason, notReadyMessage),
    condition(pod, 'ContainersReady', allReady && !finished, nowIso, notReadyReason, notReadyMessage),
    condition(pod, 'PodScheduled', true, nowIso),
  ];
  const ip = i.hostIP;
  return {
    phase,
    conditions,
    ...(ip ? { hostIP: ip, hostIPs: [{ ip }], podIP: ip, podIPs: [{ ip }] } : {}),
    startTime: pod.status?.startTime ?? nowIso,
    ...(initStatuses.length > 0 ? { initContainerStatuses: initStatuses } : {}),
    containerStatuses: statuses,
  };
}
