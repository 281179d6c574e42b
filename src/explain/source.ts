/**
 * What an explanation reads: the objects as the API server holds them (its watch caches), behind a
 * small typed interface so the explanations are pure functions testable without a server.
 */
import type { Event, Node, PersistentVolume, PersistentVolumeClaim, Pod } from 'kubernetes-types/core/v1.js';
import type {
  CSIDriver,
  CSINode,
  CSIStorageCapacity,
  StorageClass,
  VolumeAttachment,
} from 'kubernetes-types/storage/v1.js';
import type { ClusterView } from '../controllers/scheduler/types.js';
import type { CsiCall } from '../csi/tracehub.js';
import { isTerminal, podClaimNames } from '../controllers/scheduler/types.js';

export type {
  CSIDriver,
  CSINode,
  CSIStorageCapacity,
  Event,
  Node,
  PersistentVolume,
  PersistentVolumeClaim,
  Pod,
  StorageClass,
  VolumeAttachment,
};

/** The kinds an explanation reads, with their API group and plural. */
export const SOURCE_KINDS = {
  pods: { group: '', plural: 'pods' },
  claims: { group: '', plural: 'persistentvolumeclaims' },
  volumes: { group: '', plural: 'persistentvolumes' },
  nodes: { group: '', plural: 'nodes' },
  events: { group: '', plural: 'events' },
  classes: { group: 'storage.k8s.io', plural: 'storageclasses' },
  csiNodes: { group: 'storage.k8s.io', plural: 'csinodes' },
  csiDrivers: { group: 'storage.k8s.io', plural: 'csidrivers' },
  capacities: { group: 'storage.k8s.io', plural: 'csistoragecapacities' },
  attachments: { group: 'storage.k8s.io', plural: 'volumeattachments' },
} as const;
export type SourceKind = keyof typeof SOURCE_KINDS;

/** Raw reads by group and plural (the API server's registry answers them from memory). */
export interface ObjectReader {
  get(group: string, plural: string, namespace: string | undefined, name: string): unknown;
  list(group: string, plural: string, namespace?: string): readonly unknown[];
}

export interface ExplainSource {
  pod(ns: string, name: string): Pod | undefined;
  pods(ns?: string): readonly Pod[];
  claim(ns: string, name: string): PersistentVolumeClaim | undefined;
  claims(ns?: string): readonly PersistentVolumeClaim[];
  volume(name: string): PersistentVolume | undefined;
  volumes(): readonly PersistentVolume[];
  node(name: string): Node | undefined;
  nodes(): readonly Node[];
  storageClass(name: string): StorageClass | undefined;
  csiNode(name: string): CSINode | undefined;
  csiDriver(name: string): CSIDriver | undefined;
  capacities(): readonly CSIStorageCapacity[];
  attachment(name: string): VolumeAttachment | undefined;
  attachments(): readonly VolumeAttachment[];
  /** Events about one object, oldest first (a cluster-scoped object's are kept in `default`, as kube records them). */
  eventsFor(kind: string, namespace: string, name: string): readonly Event[];
  /** The CSI calls kept for a volume id, oldest first (none where this process keeps no trace). */
  csiCalls(volumeId: string): readonly CsiCall[];
}

/** Time of an event's last occurrence, for ordering (epoch ms; 0 when absent). */
export function eventTime(e: Event): number {
  const t = e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp ?? e.metadata?.creationTimestamp;
  return t ? Date.parse(String(t)) || 0 : 0;
}

/**
 * A typed source over raw reads. The registry's objects passed its decoding and validation for
 * their kind, which is what makes reading them as that kind sound here.
 */
export function newExplainSource(
  r: ObjectReader,
  calls: (volumeId: string) => readonly CsiCall[] = () => [],
): ExplainSource {
  const get = <T>(k: SourceKind, ns: string | undefined, name: string): T | undefined =>
    r.get(SOURCE_KINDS[k].group, SOURCE_KINDS[k].plural, ns, name) as T | undefined;
  const list = <T>(k: SourceKind, ns?: string): readonly T[] =>
    r.list(SOURCE_KINDS[k].group, SOURCE_KINDS[k].plural, ns) as readonly T[];
  return {
    pod: (ns, name) => get('pods', ns, name),
    pods: (ns) => list('pods', ns),
    claim: (ns, name) => get('claims', ns, name),
    claims: (ns) => list('claims', ns),
    volume: (name) => get('volumes', undefined, name),
    volumes: () => list('volumes'),
    node: (name) => get('nodes', undefined, name),
    nodes: () => list('nodes'),
    storageClass: (name) => get('classes', undefined, name),
    csiNode: (name) => get('csiNodes', undefined, name),
    csiDriver: (name) => get('csiDrivers', undefined, name),
    capacities: () => list('capacities'),
    attachment: (name) => get('attachments', undefined, name),
    attachments: () => list('attachments'),
    csiCalls: calls,
    eventsFor: (kind, namespace, name) =>
      list<Event>('events', namespace === '' ? 'default' : namespace)
        .filter((e) => e.involvedObject.kind === kind && e.involvedObject.name === name)
        .filter((e) => (e.involvedObject.namespace ?? '') === namespace)
        .slice()
        .sort((a, b) => eventTime(a) - eventTime(b)),
  };
}

/** The scheduler's ClusterView over the source, without the scheduler's own assumptions. */
export function clusterViewOf(s: ExplainSource): ClusterView {
  const live = (): Pod[] => s.pods().filter((p) => !isTerminal(p));
  return {
    nodes: () => s.nodes(),
    podsOnNode: (n) => live().filter((p) => p.spec?.nodeName === n),
    assignedPodsUsingClaim: (ns, name) =>
      live().filter((p) => p.spec?.nodeName && p.metadata?.namespace === ns && podClaimNames(p).includes(name)),
    claim: (ns, name) => s.claim(ns, name),
    volume: (name) => s.volume(name),
    volumes: () => s.volumes(),
    storageClass: (name) => s.storageClass(name),
    csiNode: (name) => s.csiNode(name),
    csiDriver: (name) => s.csiDriver(name),
    storageCapacities: () => s.capacities(),
  };
}
