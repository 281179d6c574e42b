/**
 * Which runtime container a log or exec request means, from the pod's status — the kubelet's
 * validateContainerLogStatus and findContainer. Pure; errors carry the kubelet's messages.
 */
import type { ContainerStatus, Pod } from 'kubernetes-types/core/v1.js';

/** A request the node refuses with this code (400 unless told) and text; the API server relays both. */
export class NodeRequestError extends Error {
  constructor(
    message: string,
    readonly code: 400 | 404 = 400,
  ) {
    super(message);
  }
}

/** The kubelet's container check before logs and exec: a name the pod's spec does not have is 404. */
export function mustHaveContainer(pod: Pod, container: string): void {
  const spec = pod.spec;
  const names = [
    ...(spec?.containers ?? []),
    ...(spec?.initContainers ?? []),
    ...(spec?.ephemeralContainers ?? []),
  ].map((c) => c.name);
  if (!names.includes(container))
    throw new NodeRequestError(`container "${container}" not found in pod "${pod.metadata?.name ?? ''}"`, 404);
}

function statusOf(pod: Pod, container: string): ContainerStatus | undefined {
  const s = pod.status ?? {};
  return [
    ...(s.containerStatuses ?? []),
    ...(s.initContainerStatuses ?? []),
    ...(s.ephemeralContainerStatuses ?? []),
  ].find((c) => c.name === container);
}

/** `containerd://<id>` → `<id>`. */
export function runtimeId(containerID: string): string {
  const i = containerID.indexOf('://');
  return i < 0 ? containerID : containerID.slice(i + 3);
}

/** The runtime id of the container whose log `kubectl logs [--previous]` shows. */
export function logContainerId(pod: Pod, container: string, previous: boolean): string {
  const name = pod.metadata?.name ?? '';
  const cs = statusOf(pod, container);
  if (!cs) throw new NodeRequestError(`container "${container}" in pod "${name}" is not available`);
  const last = cs.lastState?.terminated;
  const { waiting, running, terminated } = cs.state ?? {};
  const terminatedMsg = `container "${container}" in pod "${name}" is terminated`;
  if (previous) {
    if (!last?.containerID)
      throw new NodeRequestError(`previous terminated container "${container}" in pod "${name}" not found`);
    return runtimeId(last.containerID);
  }
  if (running && cs.containerID) return runtimeId(cs.containerID);
  if (terminated) {
    // A container that did not start again has no id of its own: its last run's log is shown.
    const id = terminated.containerID || last?.containerID;
    if (!id) throw new NodeRequestError(terminatedMsg);
    return runtimeId(id);
  }
  if (last) {
    if (!last.containerID) throw new NodeRequestError(terminatedMsg);
    return runtimeId(last.containerID);
  }
  if (waiting) {
    const why =
      waiting.reason === 'ErrImagePull'
        ? "image can't be pulled"
        : waiting.reason === 'ImagePullBackOff'
          ? 'trying and failing to pull image'
          : (waiting.reason ?? '');
    throw new NodeRequestError(`container "${container}" in pod "${name}" is waiting to start: ${why}`);
  }
  throw new NodeRequestError(`container "${container}" in pod "${name}" is waiting to start - no logs yet`);
}

/** The runtime id of the running container `kubectl exec` enters. */
export function runningContainerId(pod: Pod, container: string): string {
  const cs = statusOf(pod, container);
  if (!cs?.state?.running || !cs.containerID) throw new NodeRequestError(`container not found ("${container}")`);
  return runtimeId(cs.containerID);
}
