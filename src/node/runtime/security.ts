/**
 * The pod-level security settings the kubelet derives for the CRI (its
 * generatePodSandboxLinuxConfig / namespacesForPod): the sandbox is privileged when any container
 * is (containerd refuses a privileged container in an unprivileged sandbox; a privileged
 * container gets the host's devices from the runtime), and the PID and IPC namespaces follow
 * hostPID, shareProcessNamespace and hostIPC. Pure.
 */
import type { Pod } from 'kubernetes-types/core/v1.js';
import type * as T from './proto/types.js';

/** kubecontainer.HasPrivilegedContainer: any init, regular or ephemeral container privileged. */
export function hasPrivilegedContainer(pod: Pod): boolean {
  const s = pod.spec;
  return [...(s?.initContainers ?? []), ...(s?.containers ?? []), ...(s?.ephemeralContainers ?? [])].some(
    (c) => c.securityContext?.privileged === true,
  );
}

/** The PID and IPC namespace modes: the node's with hostPID/hostIPC, the pod's PID namespace when shared. */
export function processNamespaces(pod: Pod): { pid: T.NamespaceMode; ipc: T.NamespaceMode } {
  const s = pod.spec;
  return {
    pid: s?.hostPID ? 'NODE' : s?.shareProcessNamespace ? 'POD' : 'CONTAINER',
    ipc: s?.hostIPC ? 'NODE' : 'POD',
  };
}
