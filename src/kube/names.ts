/**
 * Well-known names of Kubernetes v1.30 that more than one component reads or writes: annotation
 * keys, finalizers, labels, taints and namespaces. Verbatim from Kubernetes; one definition each.
 */

// PersistentVolume controller and external-provisioner (pkg/controller/volume/persistentvolume).
/** On a claim once its binding is complete. */
export const ANN_BIND_COMPLETED = 'pv.kubernetes.io/bind-completed';
/** On a PV or claim whose binding the controller (not the user) made. */
export const ANN_BOUND_BY_CONTROLLER = 'pv.kubernetes.io/bound-by-controller';
/** On a PV: the provisioner that created it. */
export const ANN_PROVISIONED_BY = 'pv.kubernetes.io/provisioned-by';
export const ANN_MIGRATED_TO = 'pv.kubernetes.io/migrated-to';
/** On a claim: the provisioner asked to provision it (and its deprecated beta key, still written). */
export const ANN_STORAGE_PROVISIONER = 'volume.kubernetes.io/storage-provisioner';
export const ANN_BETA_STORAGE_PROVISIONER = 'volume.beta.kubernetes.io/storage-provisioner';
/** On a claim: the node the scheduler picked for a WaitForFirstConsumer volume. */
export const ANN_SELECTED_NODE = 'volume.kubernetes.io/selected-node';
/** The class before spec.storageClassName existed; it still wins over the field (see class.ts). */
export const ANN_BETA_STORAGE_CLASS = 'volume.beta.kubernetes.io/storage-class';
export const ANN_MOUNT_OPTIONS = 'volume.beta.kubernetes.io/mount-options';
export const ANN_PRE_RESIZE_CAPACITY = 'volume.alpha.kubernetes.io/pre-resize-capacity';
/** On a StorageClass: the default class (and its beta key). */
export const ANN_DEFAULT_CLASS = 'storageclass.kubernetes.io/is-default-class';
export const ANN_BETA_DEFAULT_CLASS = 'storageclass.beta.kubernetes.io/is-default-class';

// Node (kubelet) and attach/detach.
/** On a Node: attach/detach of its volumes is the controller's job. */
export const ANN_CONTROLLER_MANAGED_ATTACH_DETACH = 'volumes.kubernetes.io/controller-managed-attach-detach';
/** On a Node: JSON map CSI driver → the driver's node id, read by attach/detach and external-attacher. */
export const ANN_CSI_NODE_ID = 'csi.volume.kubernetes.io/nodeid';
export const LABEL_HOSTNAME = 'kubernetes.io/hostname';
export const TAINT_NOT_READY = 'node.kubernetes.io/not-ready';
export const TAINT_UNREACHABLE = 'node.kubernetes.io/unreachable';
export const TAINT_UNSCHEDULABLE = 'node.kubernetes.io/unschedulable';
export const TAINT_MEMORY_PRESSURE = 'node.kubernetes.io/memory-pressure';
export const TAINT_DISK_PRESSURE = 'node.kubernetes.io/disk-pressure';
export const TAINT_PID_PRESSURE = 'node.kubernetes.io/pid-pressure';
export const TAINT_NETWORK_UNAVAILABLE = 'node.kubernetes.io/network-unavailable';
/** An operator's statement that the node is down for good; its volumes may be detached without unmounting. */
export const TAINT_OUT_OF_SERVICE = 'node.kubernetes.io/out-of-service';
/** Namespace of the nodes' heartbeat Leases. */
export const NODE_LEASE_NAMESPACE = 'kube-node-lease';

// Storage-object-in-use protection.
export const PVC_PROTECTION_FINALIZER = 'kubernetes.io/pvc-protection';
export const PV_PROTECTION_FINALIZER = 'kubernetes.io/pv-protection';

// Garbage collection (metav1.FinalizerOrphanDependents / FinalizerDeleteDependents).
export const ORPHAN_FINALIZER = 'orphan';
export const FOREGROUND_FINALIZER = 'foregroundDeletion';

/** The in-tree plugin name of CSI volumes (attach/detach, volume manager). */
export const CSI_PLUGIN_NAME = 'kubernetes.io/csi';

/** The group of every node credential, and the user-name prefix naming the node (kube's nodeidentifier). */
export const NODES_GROUP = 'system:nodes';
export const NODE_USER_PREFIX = 'system:node:';

/** Who the API server is to node agents: kubeadm's name and group for its kubelet-client certificate. */
export const KUBELET_CLIENT_CN = 'kube-apiserver-kubelet-client';
export const KUBELET_CLIENT_ORG = 'system:masters';

/** DeleteOptions.propagationPolicy: what happens to an object's dependents when it is deleted. */
export const PROPAGATION_POLICIES = ['Orphan', 'Background', 'Foreground'] as const;
export type PropagationPolicy = (typeof PROPAGATION_POLICIES)[number];

/** The label an EndpointSlice carries naming its Service (discovery.LabelServiceName). */
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';
