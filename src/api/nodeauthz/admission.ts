/**
 * kube's NodeRestriction admission plugin: what the Node authorizer cannot see without the
 * objects. A node may create or change only its own Node (no taint changes, no labels outside
 * the kubelet's set), its own Lease and CSINode, the status of and evictions for pods bound to
 * it, pods only as mirror pods (Stowage has none, so never), and deletes only pods bound to it.
 */
import type { UserInfo } from '../authz.js';
import type { KubeObject } from '../resources/types.js';
import { NODE_LEASE_NAMESPACE } from '../../kube/names.js';

import { nodeIdentity } from './identity.js';
import { jsonEqual } from '../../util/jsonequal.js';

export type AdmissionOperation = 'create' | 'update' | 'delete';

export interface NodeAdmissionRequest {
  readonly user: UserInfo;
  readonly operation: AdmissionOperation;
  readonly group: string;
  readonly resource: string;
  readonly subresource?: string;
  readonly namespace?: string;
  /** The name of the object (of a create: the new object's). */
  readonly name: string;
  /** The object as it would be stored (create, update). */
  readonly obj?: KubeObject;
  /** The stored object (update, delete, and the pod of an eviction). */
  readonly old?: KubeObject;
}

const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';

/** The refusal (kube's message), or undefined when the request is admitted or not a node's. */
export function nodeRestriction(req: NodeAdmissionRequest): string | undefined {
  const id = nodeIdentity(req.user);
  if (!id.isNode) return undefined;
  const node = id.nodeName;
  if (node === '') return `could not determine node from user "${req.user.name}"`;
  const { group: g, resource: r } = req;
  if (g === '' && r === 'nodes') return admitNode(node, req);
  if (g === '' && r === 'pods') return admitPod(node, req);
  if (g === '' && r === 'persistentvolumeclaims' && req.subresource === 'status') return admitClaimStatus(node, req);
  if (g === 'coordination.k8s.io' && r === 'leases') {
    if (req.namespace !== NODE_LEASE_NAMESPACE)
      return `can only access leases in the "${NODE_LEASE_NAMESPACE}" system namespace`;
    if (req.operation === 'create' && req.name !== node)
      return 'can only access node lease with the same name as the requesting node';
  }
  if (g === 'storage.k8s.io' && r === 'csinodes' && req.operation === 'create' && req.name !== node) {
    return 'can only access CSINode with the same name as the requesting node';
  }
  return undefined;
}

function admitNode(node: string, req: NodeAdmissionRequest): string | undefined {
  if (req.name !== node) return `node "${node}" is not allowed to modify node "${req.name}"`;
  if (req.operation === 'create') {
    const bad = forbiddenLabels(modifiedLabels(req.obj?.metadata.labels, undefined));
    if (bad.length) return `node "${node}" is not allowed to set the following labels: ${bad.join(', ')}`;
  }
  if (req.operation === 'update' && req.obj && req.old) {
    const taints = (o: KubeObject): unknown => (o.spec as { taints?: unknown } | undefined)?.taints ?? [];
    if (!jsonEqual(taints(req.obj), taints(req.old))) return `node "${node}" is not allowed to modify taints`;
    const bad = forbiddenLabels(modifiedLabels(req.obj.metadata.labels, req.old.metadata.labels));
    if (bad.length) return `is not allowed to modify labels: ${bad.join(', ')}`;
  }
  return undefined;
}

function admitPod(node: string, req: NodeAdmissionRequest): string | undefined {
  const boundTo = (o: KubeObject | undefined): string | undefined =>
    (o?.spec as { nodeName?: string } | undefined)?.nodeName;
  switch (req.subresource ?? '') {
    case '':
      if (req.operation === 'create') {
        if (req.obj?.metadata.annotations?.[MIRROR_POD_ANNOTATION] === undefined) {
          return `pod does not have "${MIRROR_POD_ANNOTATION}" annotation, node "${node}" can only create mirror pods`;
        }
        // Stowage serves no static pods, so a node never needs a mirror pod.
        return `node "${node}" can only create mirror pods for static pods, which Stowage does not run`;
      }
      if (req.operation === 'delete')
        return boundTo(req.old) === node
          ? undefined
          : `node "${node}" can only delete pods with spec.nodeName set to itself`;
      return `unexpected operation "${req.operation}", node "${node}" can only create and delete mirror pods`;
    case 'status':
      if (req.operation !== 'update') return `unexpected operation "${req.operation}"`;
      if (boundTo(req.old) !== node)
        return `node "${node}" can only update pod status for pods with spec.nodeName set to itself`;
      if (!jsonEqual(req.obj?.metadata.labels ?? {}, req.old?.metadata.labels ?? {}))
        return `node "${node}" cannot update labels through pod status`;
      return undefined;
    case 'eviction':
      return boundTo(req.old) === node
        ? undefined
        : `node ${node} can only evict pods with spec.nodeName set to itself`;
    default:
      return undefined;
  }
}

/** A node may change a claim's status.capacity and status.conditions (expansion), nothing else. */
function admitClaimStatus(node: string, req: NodeAdmissionRequest): string | undefined {
  if (req.operation !== 'update' || !req.obj || !req.old) return `unexpected operation "${req.operation}"`;
  const strip = (o: KubeObject): unknown => {
    const c = structuredClone(o);
    delete c.metadata.resourceVersion;
    delete c.metadata.managedFields;
    const st = (c.status ?? {}) as Record<string, unknown>;
    for (const f of ['capacity', 'conditions', 'allocatedResourceStatuses', 'allocatedResources']) delete st[f];
    c.status = st;
    return c;
  };
  if (!jsonEqual(strip(req.obj), strip(req.old)))
    return `node "${node}" is not allowed to update fields other than status.capacity and status.conditions`;
  return undefined;
}

function modifiedLabels(a: Record<string, string> | undefined, b: Record<string, string> | undefined): string[] {
  const keys = new Set([...Object.keys(a ?? {}), ...Object.keys(b ?? {})]);
  return [...keys].filter((k) => a?.[k] !== b?.[k]).sort();
}

/** The kubelet's own labels (kubeletapis.IsKubeletLabel): these a node may set on itself. */
const KUBELET_LABELS = new Set([
  'kubernetes.io/hostname',
  'topology.kubernetes.io/zone',
  'topology.kubernetes.io/region',
  'failure-domain.beta.kubernetes.io/zone',
  'failure-domain.beta.kubernetes.io/region',
  'beta.kubernetes.io/instance-type',
  'node.kubernetes.io/instance-type',
  'kubernetes.io/os',
  'kubernetes.io/arch',
  'beta.kubernetes.io/os',
  'beta.kubernetes.io/arch',
]);
const KUBELET_LABEL_NAMESPACES = ['kubelet.kubernetes.io', 'node.kubernetes.io'];

const labelNamespace = (key: string): string => (key.includes('/') ? key.slice(0, key.indexOf('/')) : '');
const inNamespace = (ns: string, root: string): boolean => ns === root || ns.endsWith(`.${root}`);

function isKubeletLabel(key: string): boolean {
  if (KUBELET_LABELS.has(key)) return true;
  const ns = labelNamespace(key);
  return KUBELET_LABEL_NAMESPACES.some((root) => inNamespace(ns, root));
}

/** Labels a node may not add, change or remove: node-restriction.kubernetes.io/ and foreign kubernetes.io / k8s.io ones. */
function forbiddenLabels(keys: readonly string[]): string[] {
  return keys.filter((k) => {
    const ns = labelNamespace(k);
    if (inNamespace(ns, 'node-restriction.kubernetes.io')) return true;
    const kubernetes = inNamespace(ns, 'kubernetes.io') || inNamespace(ns, 'k8s.io');
    return kubernetes && !isKubeletLabel(k);
  });
}
