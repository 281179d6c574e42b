import type { Lease } from 'kubernetes-types/coordination/v1.js';
import type {
  Endpoints,
  Namespace,
  Node,
  PersistentVolume,
  PersistentVolumeClaim,
  Pod,
  Service,
} from 'kubernetes-types/core/v1.js';
import type { Deployment, ReplicaSet } from 'kubernetes-types/apps/v1.js';
import type { EndpointSlice } from 'kubernetes-types/discovery/v1.js';
import type {
  CSIDriver,
  CSINode,
  CSIStorageCapacity,
  StorageClass,
  VolumeAttachment,
} from 'kubernetes-types/storage/v1.js';
import type { PodDisruptionBudget } from 'kubernetes-types/policy/v1.js';
import type { ControllerRevision, DaemonSet, StatefulSet } from 'kubernetes-types/apps/v1.js';
import type { Job } from 'kubernetes-types/batch/v1.js';
import {
  informerFor as informerOf,
  objectOf,
  stripManagedFields,
  type Enqueuer,
  type EventHandler,
  type Informer,
  type RestClient,
} from '../client/index.js';
import type { KindMap, KindName } from '../client/kinds.js';
import { metaNamespaceKey } from '../kube/keys.js';
import { NODE_LEASE_NAMESPACE } from '../kube/names.js';
import { podVolumeClaimName } from '../kube/ephemeral.js';

/**
 * A controller's handler for the objects it reconciles: every add, update and delete queues the
 * object's own namespace/name key (kube's enqueue handlers); a deleted one's reconcile finds it
 * gone and forgets what it kept for it.
 */
export function queueOwnKey<T extends { readonly metadata?: { readonly namespace?: string; readonly name?: string } }>(
  q: Enqueuer<string>,
): EventHandler<T> {
  return {
    onAdd: (o) => q.add(metaNamespaceKey(o)),
    onUpdate: (_, o) => q.add(metaNamespaceKey(o)),
    onDelete: (x) => q.add(metaNamespaceKey(objectOf(x))),
  };
}

/**
 * A handler that maps each added, updated or deleted object to the keys of the objects it affects
 * (its owner, the claims it uses, the budgets selecting it, ...) and queues them. With `includeOld`,
 * an update also queues the old object's keys: a pod moved away from an owner or a selector must
 * bring the one it left back too (kube's updatePod does this for controller references).
 */
export function mapToKeys<T>(
  keysOf: (o: T) => Iterable<string> | string | undefined,
  opts: { readonly includeOld?: boolean } = {},
): (q: Enqueuer<string>) => EventHandler<T> {
  return (q) => {
    const queue = (...objs: T[]): void => {
      const keys = new Set<string>();
      for (const o of objs) {
        const k = keysOf(o);
        if (typeof k === 'string') keys.add(k);
        else if (k) for (const x of k) keys.add(x);
      }
      for (const k of keys) q.add(k);
    };
    return {
      onAdd: (o) => queue(o),
      onUpdate: (old, o) => (opts.includeOld ? queue(old, o) : queue(o)),
      onDelete: (x) => queue(objectOf(x)),
    };
  };
}

/** Index of pods by the claims they use (`ns/claim`), generic ephemeral claims included. */
export const POD_CLAIM_INDEX = 'claims';

export function podClaimKeys(p: Pod): string[] {
  const ns = p.metadata?.namespace ?? '';
  return (p.spec?.volumes ?? []).flatMap((v) => {
    const claim = podVolumeClaimName(p, v);
    return claim ? [`${ns}/${claim}`] : [];
  });
}

/** Index of objects by the UID their controller reference names (pods of a ReplicaSet or a Job, ReplicaSets of a Deployment). */
export const CONTROLLER_UID_INDEX = 'controllerUid';

export function controllerUidKeys(o: {
  metadata?: { ownerReferences?: ReadonlyArray<{ controller?: boolean; uid: string }> };
}): string[] {
  const ref = (o.metadata?.ownerReferences ?? []).find((r) => r.controller === true);
  return ref ? [ref.uid] : [];
}

/** Index of pods by `spec.nodeName` (unscheduled pods are in no bucket). */
export const POD_NODE_INDEX = 'nodeName';

export function podNodeKeys(p: Pod): string[] {
  return p.spec?.nodeName ? [p.spec.nodeName] : [];
}

/** Index of volumes by the claim their claimRef names (`ns/claim`), with or without a UID. */
export const PV_CLAIM_INDEX = 'claimRef';

export function volumeClaimKeys(v: PersistentVolume): string[] {
  const ref = v.spec?.claimRef;
  return ref ? [`${ref.namespace ?? ''}/${ref.name ?? ''}`] : [];
}

/** Index of VolumeAttachments by `spec.source.persistentVolumeName` (inline volumes are in no bucket). */
export const VA_VOLUME_INDEX = 'persistentVolumeName';

export function attachmentVolumeKeys(va: VolumeAttachment): string[] {
  const pv = va.spec?.source?.persistentVolumeName;
  return pv ? [pv] : [];
}

/** Index of VolumeAttachments by `spec.nodeName`. */
export const VA_NODE_INDEX = 'nodeName';

export function attachmentNodeKeys(va: VolumeAttachment): string[] {
  return va.spec?.nodeName ? [va.spec.nodeName] : [];
}

/**
 * The informers the controller manager's controllers share, so each kind is listed and watched
 * once per process (client-go's SharedInformerFactory): the PV binder, the protection
 * controllers, attach/detach and the scheduler all read these. The controller runtime starts each
 * the first time a controller needs it.
 */
export interface ControllerInformers {
  /** Indexed by PV_CLAIM_INDEX. */
  readonly pvs: Informer<PersistentVolume>;
  readonly pvcs: Informer<PersistentVolumeClaim>;
  readonly classes: Informer<StorageClass>;
  readonly nodes: Informer<Node>;
  /** Indexed by POD_CLAIM_INDEX, POD_NODE_INDEX and CONTROLLER_UID_INDEX. */
  readonly pods: Informer<Pod>;
  readonly csiDrivers: Informer<CSIDriver>;
  readonly csiNodes: Informer<CSINode>;
  /** Indexed by VA_VOLUME_INDEX and VA_NODE_INDEX. */
  readonly attachments: Informer<VolumeAttachment>;
  readonly capacities: Informer<CSIStorageCapacity>;
  readonly namespaces: Informer<Namespace>;
  /** Node heartbeats, namespace kube-node-lease only. */
  readonly nodeLeases: Informer<Lease>;
  readonly pdbs: Informer<PodDisruptionBudget>;
  /** Indexed by CONTROLLER_UID_INDEX. */
  readonly replicaSets: Informer<ReplicaSet>;
  readonly deployments: Informer<Deployment>;
  readonly services: Informer<Service>;
  readonly endpoints: Informer<Endpoints>;
  readonly endpointSlices: Informer<EndpointSlice>;
  readonly statefulSets: Informer<StatefulSet>;
  readonly daemonSets: Informer<DaemonSet>;
  readonly controllerRevisions: Informer<ControllerRevision>;
  readonly jobs: Informer<Job>;
}

export function newControllerInformers(client: RestClient): ControllerInformers {
  // kube-controller-manager's factory strips managedFields from everything it caches.
  const informerFor = <K extends KindName>(kind: K, o: { namespace?: string } = {}): Informer<KindMap[K]> =>
    informerOf(client, kind, { ...o, transform: stripManagedFields });
  const pods = informerFor('Pod');
  pods.addIndexer(POD_CLAIM_INDEX, podClaimKeys);
  pods.addIndexer(POD_NODE_INDEX, podNodeKeys);
  pods.addIndexer(CONTROLLER_UID_INDEX, controllerUidKeys);
  const replicaSets = informerFor('ReplicaSet');
  replicaSets.addIndexer(CONTROLLER_UID_INDEX, controllerUidKeys);
  const pvs = informerFor('PersistentVolume');
  pvs.addIndexer(PV_CLAIM_INDEX, volumeClaimKeys);
  const attachments = informerFor('VolumeAttachment');
  attachments.addIndexer(VA_VOLUME_INDEX, attachmentVolumeKeys);
  attachments.addIndexer(VA_NODE_INDEX, attachmentNodeKeys);
  return {
    pvs,
    pvcs: informerFor('PersistentVolumeClaim'),
    classes: informerFor('StorageClass'),
    nodes: informerFor('Node'),
    pods,
    csiDrivers: informerFor('CSIDriver'),
    csiNodes: informerFor('CSINode'),
    attachments,
    capacities: informerFor('CSIStorageCapacity'),
    namespaces: informerFor('Namespace'),
    nodeLeases: informerFor('Lease', { namespace: NODE_LEASE_NAMESPACE }),
    pdbs: informerFor('PodDisruptionBudget'),
    replicaSets,
    deployments: informerFor('Deployment'),
    services: informerFor('Service'),
    endpoints: informerFor('Endpoints'),
    endpointSlices: informerFor('EndpointSlice'),
    statefulSets: informerFor('StatefulSet'),
    daemonSets: informerFor('DaemonSet'),
    controllerRevisions: informerFor('ControllerRevision'),
    jobs: informerFor('Job'),
  };
}
