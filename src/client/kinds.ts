import type {
  ConfigMap,
  Event,
  Namespace,
  Node,
  PersistentVolume,
  PersistentVolumeClaim,
  Pod,
  Secret,
  Service,
  Endpoints,
} from 'kubernetes-types/core/v1.js';
import type { Deployment, ReplicaSet } from 'kubernetes-types/apps/v1.js';
import type { EndpointSlice } from 'kubernetes-types/discovery/v1.js';
import type { Lease } from 'kubernetes-types/coordination/v1.js';
import type { PodDisruptionBudget } from 'kubernetes-types/policy/v1.js';
import type { ControllerRevision, DaemonSet, StatefulSet } from 'kubernetes-types/apps/v1.js';
import type { Job } from 'kubernetes-types/batch/v1.js';
import type {
  CSIDriver,
  CSINode,
  CSIStorageCapacity,
  StorageClass,
  VolumeAttachment,
} from 'kubernetes-types/storage/v1.js';

/** How one kind is addressed over REST. `group` '' is the legacy core group (`/api/v1`). */
export interface KindInfo {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly namespaced: boolean;
}

/** Every kind Stowage serves, as one table; `KindName` is derived from it. */
export const KINDS = {
  Namespace: { group: '', version: 'v1', plural: 'namespaces', namespaced: false },
  Node: { group: '', version: 'v1', plural: 'nodes', namespaced: false },
  Pod: { group: '', version: 'v1', plural: 'pods', namespaced: true },
  PersistentVolume: { group: '', version: 'v1', plural: 'persistentvolumes', namespaced: false },
  PersistentVolumeClaim: { group: '', version: 'v1', plural: 'persistentvolumeclaims', namespaced: true },
  Event: { group: '', version: 'v1', plural: 'events', namespaced: true },
  Secret: { group: '', version: 'v1', plural: 'secrets', namespaced: true },
  ConfigMap: { group: '', version: 'v1', plural: 'configmaps', namespaced: true },
  StorageClass: { group: 'storage.k8s.io', version: 'v1', plural: 'storageclasses', namespaced: false },
  CSIDriver: { group: 'storage.k8s.io', version: 'v1', plural: 'csidrivers', namespaced: false },
  CSINode: { group: 'storage.k8s.io', version: 'v1', plural: 'csinodes', namespaced: false },
  VolumeAttachment: { group: 'storage.k8s.io', version: 'v1', plural: 'volumeattachments', namespaced: false },
  CSIStorageCapacity: { group: 'storage.k8s.io', version: 'v1', plural: 'csistoragecapacities', namespaced: true },
  Lease: { group: 'coordination.k8s.io', version: 'v1', plural: 'leases', namespaced: true },
  PodDisruptionBudget: { group: 'policy', version: 'v1', plural: 'poddisruptionbudgets', namespaced: true },
  Service: { group: '', version: 'v1', plural: 'services', namespaced: true },
  Endpoints: { group: '', version: 'v1', plural: 'endpoints', namespaced: true },
  EndpointSlice: { group: 'discovery.k8s.io', version: 'v1', plural: 'endpointslices', namespaced: true },
  Deployment: { group: 'apps', version: 'v1', plural: 'deployments', namespaced: true },
  ReplicaSet: { group: 'apps', version: 'v1', plural: 'replicasets', namespaced: true },
  StatefulSet: { group: 'apps', version: 'v1', plural: 'statefulsets', namespaced: true },
  DaemonSet: { group: 'apps', version: 'v1', plural: 'daemonsets', namespaced: true },
  ControllerRevision: { group: 'apps', version: 'v1', plural: 'controllerrevisions', namespaced: true },
  Job: { group: 'batch', version: 'v1', plural: 'jobs', namespaced: true },
} as const satisfies Record<string, KindInfo>;

export type KindName = keyof typeof KINDS;

/** Kind name → its kubernetes-types object type. */
export interface KindMap {
  Namespace: Namespace;
  Node: Node;
  Pod: Pod;
  PersistentVolume: PersistentVolume;
  PersistentVolumeClaim: PersistentVolumeClaim;
  Event: Event;
  Secret: Secret;
  ConfigMap: ConfigMap;
  StorageClass: StorageClass;
  CSIDriver: CSIDriver;
  CSINode: CSINode;
  VolumeAttachment: VolumeAttachment;
  CSIStorageCapacity: CSIStorageCapacity;
  Lease: Lease;
  PodDisruptionBudget: PodDisruptionBudget;
  Service: Service;
  Endpoints: Endpoints;
  EndpointSlice: EndpointSlice;
  Deployment: Deployment;
  ReplicaSet: ReplicaSet;
  StatefulSet: StatefulSet;
  DaemonSet: DaemonSet;
  ControllerRevision: ControllerRevision;
  Job: Job;
}

/** `apiVersion` as written in objects: `v1` or `group/version`. */
export function apiVersionOf(info: KindInfo): string {
  return info.group === '' ? info.version : `${info.group}/${info.version}`;
}

/**
 * The collection path of a kind, e.g. `/api/v1/namespaces/ns/persistentvolumeclaims` or
 * `/apis/storage.k8s.io/v1/storageclasses`. A namespaced kind without a namespace addresses all
 * namespaces (list/watch only).
 */
export function collectionPath(info: KindInfo, namespace?: string): string {
  const root = info.group === '' ? `/api/${info.version}` : `/apis/${info.group}/${info.version}`;
  if (info.namespaced && namespace) return `${root}/namespaces/${encodeURIComponent(namespace)}/${info.plural}`;
  return `${root}/${info.plural}`;
}

/** The path of one object, optionally a subresource (`status`). */
export function objectPath(info: KindInfo, name: string, namespace?: string, subresource?: string): string {
  const p = `${collectionPath(info, namespace)}/${encodeURIComponent(name)}`;
  return subresource ? `${p}/${subresource}` : p;
}
