/** Builders and an in-memory ClusterView for the scheduler's unit tests. */
import {
  isTerminal,
  podClaimNames,
  type ClusterView,
  type CSIDriver,
  type CSINode,
  type CSIStorageCapacity,
  type Node,
  type PersistentVolume,
  type PersistentVolumeClaim,
  type Pod,
  type StorageClass,
} from './types.js';
import { nameOf } from '../../kube/meta.js';

export interface World {
  nodes?: Node[];
  pods?: Pod[];
  claims?: PersistentVolumeClaim[];
  volumes?: PersistentVolume[];
  classes?: StorageClass[];
  csiNodes?: CSINode[];
  csiDrivers?: CSIDriver[];
  capacities?: CSIStorageCapacity[];
}

export function viewOf(w: World): ClusterView {
  const pods = (w.pods ?? []).filter((p) => !isTerminal(p));
  return {
    nodes: () => w.nodes ?? [],
    podsOnNode: (n) => pods.filter((p) => p.spec?.nodeName === n),
    assignedPodsUsingClaim: (ns, name) =>
      pods.filter((p) => p.spec?.nodeName && p.metadata?.namespace === ns && podClaimNames(p).includes(name)),
    claim: (ns, name) => (w.claims ?? []).find((c) => c.metadata?.namespace === ns && nameOf(c) === name),
    volume: (name) => (w.volumes ?? []).find((v) => nameOf(v) === name),
    volumes: () => w.volumes ?? [],
    storageClass: (name) => (w.classes ?? []).find((c) => nameOf(c) === name),
    csiNode: (name) => (w.csiNodes ?? []).find((c) => nameOf(c) === name),
    csiDriver: (name) => (w.csiDrivers ?? []).find((c) => nameOf(c) === name),
    storageCapacities: () => w.capacities ?? [],
  };
}

export function node(
  name: string,
  labels: Record<string, string> = {},
  o: { ready?: boolean; unschedulable?: boolean } = {},
): Node {
  return {
    metadata: { name, labels: { 'kubernetes.io/hostname': name, ...labels } },
    spec: o.unschedulable ? { unschedulable: true } : {},
    status: { conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True' }] },
  };
}

export function pod(name: string, claims: string[], o: { nodeName?: string; uid?: string } = {}): Pod {
  return {
    metadata: { name, namespace: 'default', uid: o.uid ?? `uid-${name}` },
    spec: {
      containers: [{ name: 'c', image: 'busybox' }],
      ...(o.nodeName ? { nodeName: o.nodeName } : {}),
      volumes: claims.map((c, i) => ({ name: `v${i}`, persistentVolumeClaim: { claimName: c } })),
    },
  };
}

export function claim(
  name: string,
  o: {
    cls?: string;
    size?: string;
    modes?: string[];
    volumeName?: string;
    bound?: boolean;
    selectedNode?: string;
  } = {},
): PersistentVolumeClaim {
  const ann: Record<string, string> = {};
  if (o.bound) ann['pv.kubernetes.io/bind-completed'] = 'yes';
  if (o.selectedNode) ann['volume.kubernetes.io/selected-node'] = o.selectedNode;
  return {
    metadata: { name, namespace: 'default', uid: `uid-${name}`, annotations: ann, resourceVersion: '1' },
    spec: {
      storageClassName: o.cls ?? 'wffc',
      accessModes: o.modes ?? ['ReadWriteOnce'],
      resources: { requests: { storage: o.size ?? '1Gi' } },
      ...(o.volumeName ? { volumeName: o.volumeName } : {}),
    },
    status: { phase: o.bound ? 'Bound' : 'Pending' },
  };
}

export function volume(
  name: string,
  o: {
    cls?: string;
    size?: string;
    nodes?: string[];
    claim?: string;
    driver?: string;
    handle?: string;
    modes?: string[];
  } = {},
): PersistentVolume {
  return {
    metadata: { name },
    spec: {
      storageClassName: o.cls ?? 'wffc',
      capacity: { storage: o.size ?? '1Gi' },
      accessModes: o.modes ?? ['ReadWriteOnce'],
      csi: { driver: o.driver ?? 'hostpath.csi.k8s.io', volumeHandle: o.handle ?? `h-${name}` },
      ...(o.nodes
        ? {
            nodeAffinity: {
              required: {
                nodeSelectorTerms: [
                  { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: o.nodes }] },
                ],
              },
            },
          }
        : {}),
      ...(o.claim ? { claimRef: { namespace: 'default', name: o.claim, uid: `uid-${o.claim}` } } : {}),
    },
    status: { phase: o.claim ? 'Bound' : 'Available' },
  };
}

export function storageClass(
  name: string,
  o: { wffc?: boolean; provisioner?: string; zones?: string[] } = {},
): StorageClass {
  return {
    metadata: { name },
    provisioner: o.provisioner ?? 'hostpath.csi.k8s.io',
    volumeBindingMode: o.wffc === false ? 'Immediate' : 'WaitForFirstConsumer',
    ...(o.zones ? { allowedTopologies: [{ matchLabelExpressions: [{ key: 'zone', values: o.zones }] }] } : {}),
  };
}

export function csiNode(
  name: string,
  drivers: Array<{ name?: string; count?: number; topologyKeys?: string[] }>,
): CSINode {
  return {
    metadata: { name },
    spec: {
      drivers: drivers.map((d) => ({
        name: d.name ?? 'hostpath.csi.k8s.io',
        nodeID: name,
        ...(d.topologyKeys ? { topologyKeys: d.topologyKeys } : {}),
        ...(d.count !== undefined ? { allocatable: { count: d.count } } : {}),
      })),
    },
  };
}
