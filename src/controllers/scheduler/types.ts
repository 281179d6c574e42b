/**
 * Vocabulary of Stowage's scheduler: the filter reasons kube-scheduler v1.30 prints (one table, so
 * FailedScheduling messages read exactly like Kubernetes'), and the read-only cluster view the pure
 * decision functions work on.
 */
import type { Node, PersistentVolume, PersistentVolumeClaim, Pod } from 'kubernetes-types/core/v1.js';
import { podVolumeClaimName } from '../../kube/ephemeral.js';
import type { CSIDriver, CSINode, CSIStorageCapacity, StorageClass } from 'kubernetes-types/storage/v1.js';

export type {
  CSIDriver,
  CSINode,
  CSIStorageCapacity,
  Node,
  PersistentVolume,
  PersistentVolumeClaim,
  Pod,
  StorageClass,
};

export const DEFAULT_SCHEDULER_NAME = 'default-scheduler';
export {
  ANN_SELECTED_NODE,
  ANN_BOUND_BY_CONTROLLER,
  ANN_BIND_COMPLETED,
  TAINT_NOT_READY,
  TAINT_UNSCHEDULABLE,
} from '../../kube/names.js';

/** Filter failure reasons, verbatim from the kube-scheduler plugins that produce them. */
export const REASONS = {
  /** NodeUnschedulable */
  nodeUnschedulable: 'node(s) were unschedulable',
  /** NodeAffinity (nodeSelector and required node affinity) */
  nodeAffinity: "node(s) didn't match Pod's node affinity/selector",
  /** VolumeRestrictions */
  readWriteOncePodConflict:
    'node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode',
  /** NodeVolumeLimits */
  maxVolumeCount: 'node(s) exceed max volume count',
  /** VolumeBinding (binder.go ConflictReasons) */
  bindConflict: "node(s) didn't find available persistent volumes to bind",
  nodeConflict: 'node(s) had volume node affinity conflict',
  pvNotExist: 'node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)',
  notEnoughSpace: 'node(s) did not have enough free storage',
} as const;
export type Reason = (typeof REASONS)[keyof typeof REASONS] | `node(s) had untolerated taint {${string}}`;

/** VolumeBinding PreFilter rejection for the whole pod. */
export const MSG_UNBOUND_IMMEDIATE = 'pod has unbound immediate PersistentVolumeClaims';

/**
 * Whether preemption could help a node's failure (framework.Unschedulable) or not
 * (UnschedulableAndUnresolvable); it decides the "preemption: …" tail of the message.
 */
export type FailureCode = 'Unschedulable' | 'UnschedulableAndUnresolvable';

export interface NodeFailure {
  readonly code: FailureCode;
  readonly reasons: readonly Reason[];
}

/**
 * What the scheduler knows: informer contents plus its own assumptions (pods it placed but the
 * informer has not shown yet, volumes it bound). Implementations must not hand out mutable internals.
 */
export interface ClusterView {
  nodes(): readonly Node[];
  /** Non-terminal pods assigned (or assumed) to `node`, each with spec.nodeName set. */
  podsOnNode(node: string): readonly Pod[];
  /** Assigned (or assumed) non-terminal pods using claim `namespace/name`. */
  assignedPodsUsingClaim(namespace: string, name: string): readonly Pod[];
  claim(namespace: string, name: string): PersistentVolumeClaim | undefined;
  volume(name: string): PersistentVolume | undefined;
  volumes(): readonly PersistentVolume[];
  storageClass(name: string): StorageClass | undefined;
  csiNode(name: string): CSINode | undefined;
  csiDriver(name: string): CSIDriver | undefined;
  storageCapacities(): readonly CSIStorageCapacity[];
}

export function podKey(p: Pod): string {
  return `${p.metadata?.namespace ?? ''}/${p.metadata?.name ?? ''}`;
}

/** Claim names (in the pod's namespace) of PVC and generic ephemeral volumes, in volume order. */
export function podClaimNames(p: Pod): string[] {
  return (p.spec?.volumes ?? []).flatMap((v) => {
    const claim = podVolumeClaimName(p, v);
    return claim ? [claim] : [];
  });
}

export function isTerminal(p: Pod): boolean {
  return p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed';
}
