/**
 * The CRI configs of a pod's sandbox and containers, built from the pod spec and the volume
 * manager's host paths — the kubelet's generatePodSandboxConfig / generateContainerConfig. Pure.
 */
import { join } from 'node:path';
import type { Container, Pod, Volume } from 'kubernetes-types/core/v1.js';
import { expandVars } from './env.js';
import type * as T from './proto/types.js';
import { quantityNanos, quantityValue } from '../../kube/quantity.js';
import { hasPrivilegedContainer, processNamespaces } from './security.js';

// The labels the kubelet puts on sandboxes and containers; how it finds a pod's after a restart.
export const LABEL_POD_NAME = 'io.kubernetes.pod.name';
export const LABEL_POD_NAMESPACE = 'io.kubernetes.pod.namespace';
export const LABEL_POD_UID = 'io.kubernetes.pod.uid';
export const LABEL_CONTAINER_NAME = 'io.kubernetes.container.name';

/** `<root>/logs/pods/<namespace>_<name>_<uid>`: the kubelet's pod log directory layout. */
export function podLogDir(rootDir: string, pod: Pod): string {
  const m = pod.metadata ?? {};
  return join(rootDir, 'logs', 'pods', `${m.namespace ?? 'default'}_${m.name ?? ''}_${m.uid ?? ''}`);
}

/** `<container>/<attempt>.log`, relative to the pod's log directory. */
export function containerLogPath(container: string, attempt: number): string {
  return join(container, `${attempt}.log`);
}

export function podLabels(pod: Pod): Record<string, string> {
  const m = pod.metadata ?? {};
  return {
    ...(m.labels ?? {}),
    [LABEL_POD_NAME]: m.name ?? '',
    [LABEL_POD_NAMESPACE]: m.namespace ?? 'default',
    [LABEL_POD_UID]: m.uid ?? '',
  };
}

/** The sandbox: on the host's network (pods share the node's network and its address). */
export function sandboxConfig(pod: Pod, attempt: number, rootDir: string): T.PodSandboxConfig {
  const m = pod.metadata ?? {};
  return {
    metadata: { name: m.name ?? '', namespace: m.namespace ?? 'default', uid: m.uid ?? '', attempt },
    logDirectory: podLogDir(rootDir, pod),
    labels: podLabels(pod),
    annotations: { ...(m.annotations ?? {}) },
    linux: {
      securityContext: {
        namespaceOptions: { network: 'NODE', ...processNamespaces(pod) },
        privileged: hasPrivilegedContainer(pod),
      },
    },
  };
}

/**
 * Whether the volume's mounter says read-only whatever the volumeMount asks (the kubelet's
 * makeMounts ORs `mount.readOnly` with the mounter's ReadOnly attribute): configMap, secret,
 * downwardAPI and projected (the service-account token too) are always read-only; a claim or an
 * inline CSI volume when its source says `readOnly`.
 */
export function volumeForcesReadOnly(v: Volume | undefined): boolean {
  if (!v) return false;
  if (v.configMap || v.secret || v.downwardAPI || v.projected) return true;
  return v.persistentVolumeClaim?.readOnly === true || v.csi?.readOnly === true;
}

export function containerConfig(o: {
  pod: Pod;
  container: Container;
  attempt: number;
  imageRef: string;
  env: ReadonlyMap<string, string>;
  /** volumeMount index → its host path (subPaths already resolved). */
  mounts: ReadonlyMap<number, string>;
  /** volumeDevice index → the block device's host path (the volume manager's block path). */
  devices?: ReadonlyMap<number, string>;
}): T.ContainerConfig {
  const c = o.container;
  const expand = (s: string): string => expandVars(s, o.env);
  const sc = c.securityContext;
  const psc = o.pod.spec?.securityContext;
  const runAsUser = sc?.runAsUser ?? psc?.runAsUser;
  const runAsGroup = sc?.runAsGroup ?? psc?.runAsGroup;
  const volumes = new Map((o.pod.spec?.volumes ?? []).map((v) => [v.name, v]));
  return {
    metadata: { name: c.name, attempt: o.attempt },
    image: { image: o.imageRef, userSpecifiedImage: c.image ?? '' },
    command: (c.command ?? []).map(expand),
    args: (c.args ?? []).map(expand),
    workingDir: c.workingDir ?? '',
    envs: [...o.env].map(([key, value]) => ({ key, value })),
    mounts: (c.volumeMounts ?? []).map((m, i) => ({
      containerPath: m.mountPath,
      hostPath: o.mounts.get(i) ?? '',
      readonly: m.readOnly === true || volumeForcesReadOnly(volumes.get(m.name)),
      propagation:
        m.mountPropagation === 'HostToContainer'
          ? 'PROPAGATION_HOST_TO_CONTAINER'
          : m.mountPropagation === 'Bidirectional'
            ? 'PROPAGATION_BIDIRECTIONAL'
            : 'PROPAGATION_PRIVATE',
    })),
    devices: (c.volumeDevices ?? []).map((d, i) => ({
      containerPath: d.devicePath,
      hostPath: o.devices?.get(i) ?? '',
      permissions: 'mrw',
    })),
    labels: {
      [LABEL_POD_NAME]: o.pod.metadata?.name ?? '',
      [LABEL_POD_NAMESPACE]: o.pod.metadata?.namespace ?? 'default',
      [LABEL_POD_UID]: o.pod.metadata?.uid ?? '',
      [LABEL_CONTAINER_NAME]: c.name,
    },
    annotations: { 'io.kubernetes.container.restartCount': String(o.attempt) },
    logPath: containerLogPath(c.name, o.attempt),
    stdin: c.stdin === true,
    stdinOnce: c.stdinOnce === true,
    tty: c.tty === true,
    linux: {
      resources: linuxResources(c),
      securityContext: {
        privileged: sc?.privileged === true,
        readonlyRootfs: sc?.readOnlyRootFilesystem === true,
        ...(runAsUser !== undefined ? { runAsUser: { value: runAsUser } } : {}),
        ...(runAsGroup !== undefined ? { runAsGroup: { value: runAsGroup } } : {}),
        supplementalGroups: [...(psc?.fsGroup !== undefined ? [psc.fsGroup] : []), ...(psc?.supplementalGroups ?? [])],
        namespaceOptions: { network: 'NODE', ...processNamespaces(o.pod) },
        ...(sc?.capabilities
          ? {
              capabilities: {
                addCapabilities: sc.capabilities.add ?? [],
                dropCapabilities: sc.capabilities.drop ?? [],
              },
            }
          : {}),
      },
    },
  };
}

const MIN_SHARES = 2;
const SHARES_PER_CPU = 1024;
const QUOTA_PERIOD_US = 100_000;
const MIN_QUOTA_US = 1_000;

const milli = (q: string | number | undefined): number => Number((quantityNanos(q) + 999_999n) / 1_000_000n);

/**
 * The container's cgroup limits as the kubelet computes them: cpu shares from the request (the
 * limit when no request), CFS quota over a 100 ms period from the cpu limit, the memory limit.
 */
export function linuxResources(c: Container): T.LinuxContainerResources {
  const req = c.resources?.requests ?? {};
  const lim = c.resources?.limits ?? {};
  const cpuReq = milli(req['cpu'] ?? lim['cpu']);
  const cpuLim = milli(lim['cpu']);
  const mem = lim['memory'] !== undefined ? Number(quantityValue(lim['memory'])) : 0;
  return {
    cpuShares: Math.max(MIN_SHARES, Math.floor((cpuReq * SHARES_PER_CPU) / 1000)),
    ...(cpuLim > 0
      ? { cpuPeriod: QUOTA_PERIOD_US, cpuQuota: Math.max(MIN_QUOTA_US, Math.floor((cpuLim * QUOTA_PERIOD_US) / 1000)) }
      : {}),
    ...(mem > 0 ? { memoryLimitInBytes: mem } : {}),
  };
}

/** The kubelet's default pull policy: Always for `:latest` or no tag, IfNotPresent otherwise. */
export function pullPolicyOf(c: Container): 'Always' | 'IfNotPresent' | 'Never' {
  if (c.imagePullPolicy === 'Always' || c.imagePullPolicy === 'IfNotPresent' || c.imagePullPolicy === 'Never')
    return c.imagePullPolicy;
  const image = c.image ?? '';
  if (image.includes('@')) return 'IfNotPresent';
  const lastSlash = image.lastIndexOf('/');
  const colon = image.indexOf(':', lastSlash + 1);
  const tag = colon >= 0 ? image.slice(colon + 1) : '';
  return tag === '' || tag === 'latest' ? 'Always' : 'IfNotPresent';
}
