/** Pure construction of the agent's Node: labels, status and the Lease spec. */
import { metaTime, microTime } from '../../util/metatime.js';
import type { Node, NodeCondition, NodeStatus } from 'kubernetes-types/core/v1.js';
import type { Lease } from 'kubernetes-types/coordination/v1.js';
import { LABEL_HOSTNAME, NODE_LEASE_NAMESPACE } from '../../kube/names.js';
import type { HostInfo } from './host.js';
import { RUNTIME_CONDITION, runtimeVersionString, type ContainerRuntimeInfo } from '../runtime/info.js';

export { NODE_LEASE_NAMESPACE };

// The kubelet's default lease duration; it renews every quarter of it (10 s).
export const LEASE_DURATION_SECONDS = 40;

/** The labels the kubelet sets on its Node. */
export function nodeLabels(nodeName: string, host: HostInfo): Record<string, string> {
  return {
    [LABEL_HOSTNAME]: nodeName,
    'kubernetes.io/os': host.os,
    'kubernetes.io/arch': host.arch,
    'beta.kubernetes.io/os': host.os,
    'beta.kubernetes.io/arch': host.arch,
  };
}

/** Labels missing from (or different on) the node; undefined when all are in place. */
export function missingLabels(node: Node, want: Readonly<Record<string, string>>): Record<string, string> | undefined {
  const have = node.metadata?.labels ?? {};
  const out = Object.fromEntries(Object.entries(want).filter(([k, v]) => have[k] !== v));
  return Object.keys(out).length ? out : undefined;
}

export { microTime };

const CONDITIONS: ReadonlyArray<{ type: string; status: 'True' | 'False'; reason: string; message: string }> = [
  {
    type: 'MemoryPressure',
    status: 'False',
    reason: 'KubeletHasSufficientMemory',
    message: 'node agent has sufficient memory available',
  },
  {
    type: 'DiskPressure',
    status: 'False',
    reason: 'KubeletHasNoDiskPressure',
    message: 'node agent has no disk pressure',
  },
  {
    type: 'PIDPressure',
    status: 'False',
    reason: 'KubeletHasSufficientPID',
    message: 'node agent has sufficient PID available',
  },
  { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'stowage node agent is posting ready status' },
];

/** The runtime condition: a node without a runtime mounts pods' volumes but runs no containers, and says so. */
function runtimeCondition(r: ContainerRuntimeInfo): {
  type: string;
  status: 'True' | 'False';
  reason: string;
  message: string;
} {
  if (r.kind === 'none')
    return {
      type: RUNTIME_CONDITION,
      status: 'True',
      reason: 'NoContainerRuntime',
      message: 'no container runtime: pods get their volumes mounted but their containers do not run',
    };
  if (r.down !== undefined)
    return {
      type: RUNTIME_CONDITION,
      status: 'True',
      reason: 'ContainerRuntimeDown',
      message: `container runtime ${runtimeVersionString(r)} at ${r.endpoint} is down: ${r.down}`,
    };
  return {
    type: RUNTIME_CONDITION,
    status: 'False',
    reason: 'ContainerRuntimeConnected',
    message: `container runtime ${runtimeVersionString(r)} at ${r.endpoint}`,
  };
}

/** The node's HTTPS endpoint (the kubelet's daemon endpoint). */
export interface NodeEndpoint {
  readonly port: number;
}

// The kubelet's Ready condition while its runtime does not answer (its runtimeState error text).
const RUNTIME_DOWN_READY = {
  type: 'Ready',
  status: 'False',
  reason: 'KubeletNotReady',
  message: 'container runtime is down',
} as const;

/**
 * The status the agent reports. A condition keeps its lastTransitionTime while its status is
 * unchanged; lastHeartbeatTime is always now.
 */
export function nodeStatus(o: {
  current?: NodeStatus;
  host: HostInfo;
  nodeName: string;
  kubeletVersion: string;
  nowMs: number;
  runtime?: ContainerRuntimeInfo;
  endpoint?: NodeEndpoint;
}): NodeStatus {
  const now = metaTime(o.nowMs);
  const runtimeDown = o.runtime?.kind === 'cri' && o.runtime.down !== undefined;
  const base = CONDITIONS.map((c) => (c.type === 'Ready' && runtimeDown ? RUNTIME_DOWN_READY : c));
  const conditions: NodeCondition[] = [...base, ...(o.runtime ? [runtimeCondition(o.runtime)] : [])].map((c) => {
    const prev = o.current?.conditions?.find((x) => x.type === c.type);
    return {
      ...c,
      lastHeartbeatTime: now,
      lastTransitionTime: prev?.status === c.status && prev.lastTransitionTime ? prev.lastTransitionTime : now,
    };
  });
  const resources = {
    cpu: String(o.host.cpus),
    memory: `${Math.floor(o.host.memoryBytes / 1024)}Ki`,
    pods: '110', // the kubelet's default --max-pods
  };
  return {
    conditions,
    addresses: [
      ...(o.host.internalIP ? [{ type: 'InternalIP', address: o.host.internalIP }] : []),
      { type: 'Hostname', address: o.host.hostname },
    ],
    ...(o.endpoint ? { daemonEndpoints: { kubeletEndpoint: { Port: o.endpoint.port } } } : {}),
    capacity: resources,
    allocatable: resources,
    nodeInfo: {
      machineID: o.host.machineID,
      systemUUID: o.host.machineID,
      bootID: o.host.bootID,
      kernelVersion: o.host.kernelVersion,
      osImage: o.host.osImage,
      containerRuntimeVersion: o.runtime ? runtimeVersionString(o.runtime) : '',
      kubeletVersion: o.kubeletVersion,
      kubeProxyVersion: '',
      operatingSystem: o.host.os,
      architecture: o.host.arch,
    },
  };
}

/** A new node Lease, owned by the Node (deleted with it). */
export function newLease(node: Node, nowMs: number, durationSeconds = LEASE_DURATION_SECONDS): Lease {
  const name = node.metadata?.name ?? '';
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: {
      name,
      namespace: NODE_LEASE_NAMESPACE,
      ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name, uid: node.metadata?.uid ?? '' }],
    },
    spec: { holderIdentity: name, leaseDurationSeconds: durationSeconds, renewTime: microTime(nowMs) },
  };
}

/** The lease renewed now (holder and duration reasserted). */
export function renewedLease(
  lease: Lease,
  nodeName: string,
  nowMs: number,
  durationSeconds = LEASE_DURATION_SECONDS,
): Lease {
  return {
    ...lease,
    spec: {
      ...lease.spec,
      holderIdentity: nodeName,
      leaseDurationSeconds: durationSeconds,
      renewTime: microTime(nowMs),
    },
  };
}
