/**
 * kube's Node authorizer (plugin/pkg/auth/authorizer/node, AuthorizeNodeWithSelectors on, as
 * Kubernetes 1.32+): a node reads the secrets, configmaps, claims and volumes of the pods bound to
 * it, its own Node, Lease and CSINode, the VolumeAttachments for it, and what the static
 * system:node rules grant. Writes of Node objects and pods are narrowed further by NodeRestriction
 * (admission.ts), which sees the objects. Other users get no opinion from here.
 */
import type { Decision, RequestAttributes, ResourceRule, Rules, Authorizer } from '../authz.js';
import { rulesAllow } from '../authz.js';
import { fieldSelectorExactValue, parseFieldSelector } from '../../kube/selectors.js';
import { NODE_LEASE_NAMESPACE } from '../../kube/names.js';
import { hasPathToNode, type GraphSource, type VertexKind } from './graph.js';
import { nodeIdentity } from './identity.js';

type ResourceAttributes = Extract<RequestAttributes, { kind: 'resource' }>;

/** bootstrappolicy.NodeRules() for what Stowage serves (the kinds the graph decides are left out). */
export const NODE_RULES: readonly ResourceRule[] = [
  { verbs: ['create', 'update', 'patch'], apiGroups: ['', 'events.k8s.io'], resources: ['events'] },
  { verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['services'] },
  { verbs: ['get', 'list', 'watch'], apiGroups: ['storage.k8s.io'], resources: ['csidrivers'] },
  { verbs: ['get', 'list', 'watch'], apiGroups: ['node.k8s.io'], resources: ['runtimeclasses'] },
  {
    verbs: ['create', 'get', 'list', 'watch'],
    apiGroups: ['certificates.k8s.io'],
    resources: ['certificatesigningrequests'],
  },
  { verbs: ['create'], apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'] },
  {
    verbs: ['create'],
    apiGroups: ['authorization.k8s.io'],
    resources: ['subjectaccessreviews', 'localsubjectaccessreviews'],
  },
];

const NO: Decision = { allowed: false, reason: '' };
const no = (reason: string): Decision => ({ allowed: false, reason });
const YES: Decision = { allowed: true, reason: '' };

/** The Node authorizer over the cached objects in `graph`. */
export function newNodeAuthorizer(graph: GraphSource): Authorizer {
  return {
    authorize: (a) => {
      const id = nodeIdentity(a.user);
      if (!id.isNode) return NO;
      if (id.nodeName === '') return no(`unknown node for user "${a.user.name}"`);
      if (a.kind === 'resource') {
        const d = authorizeResource(graph, id.nodeName, a);
        if (d) return d;
      }
      return rulesAllow({ resourceRules: NODE_RULES, nonResourceRules: [], incomplete: false }, a) ? YES : NO;
    },
    // kube: nodes do not have fully enumerated permissions; list the static ones and say so.
    rulesFor: (user): Rules =>
      nodeIdentity(user).isNode
        ? { resourceRules: NODE_RULES, nonResourceRules: [], incomplete: true }
        : { resourceRules: [], nonResourceRules: [], incomplete: false },
  };
}

/** The decision for the kinds the node authorizer subdivides; undefined = the static rules decide. */
function authorizeResource(graph: GraphSource, node: string, a: ResourceAttributes): Decision | undefined {
  const g = a.group;
  const r = a.resource;
  if (g === '' && r === 'secrets') return readNamespaced(graph, node, 'secret', a);
  if (g === '' && r === 'configmaps') return readNamespaced(graph, node, 'configmap', a);
  if (g === '' && r === 'persistentvolumeclaims')
    return a.subresource === 'status' ? statusUpdate(graph, node, 'pvc', a) : getRelated(graph, node, 'pvc', a);
  if (g === '' && r === 'persistentvolumes') return getRelated(graph, node, 'pv', a);
  if (g === 'storage.k8s.io' && r === 'volumeattachments') return getRelated(graph, node, 'volumeattachment', a);
  if (g === 'coordination.k8s.io' && r === 'leases') return lease(node, a);
  if (g === 'storage.k8s.io' && r === 'csinodes') return csiNode(node, a);
  if (g === '' && r === 'nodes') return nodeObject(node, a);
  if (g === '' && r === 'pods') return pod(graph, node, a);
  return undefined;
}

function related(graph: GraphSource, node: string, kind: VertexKind, a: ResourceAttributes): Decision {
  if (!a.name) return no('No Object name found');
  return hasPathToNode(graph, node, kind, a.namespace ?? '', a.name)
    ? YES
    : no(`no relationship found between node '${node}' and this object`);
}

/**
 * kube allows only `get` of claims, volumes and attachments; Stowage's node agent follows each one
 * it needs with a single-object list+watch (`metadata.name=` selector), which reveals nothing more
 * than that get, so list and watch of one named related object are allowed too.
 */
function getRelated(graph: GraphSource, node: string, kind: VertexKind, a: ResourceAttributes): Decision {
  if (a.verb !== 'get' && a.verb !== 'list' && a.verb !== 'watch')
    return no('can only get individual resources of this type');
  if (a.subresource) return no('cannot get subresource');
  return related(graph, node, kind, a);
}

function readNamespaced(graph: GraphSource, node: string, kind: VertexKind, a: ResourceAttributes): Decision {
  if (a.verb !== 'get' && a.verb !== 'list' && a.verb !== 'watch') return no('can only read resources of this type');
  if (a.subresource) return no('cannot read subresource');
  if (!a.namespace) return no('can only read namespaced object of this type');
  return related(graph, node, kind, a);
}

function statusUpdate(graph: GraphSource, node: string, kind: VertexKind, a: ResourceAttributes): Decision {
  if (a.verb !== 'update' && a.verb !== 'patch') return no('can only get/update/patch this type');
  return related(graph, node, kind, a);
}

const LEASE_VERBS = ['get', 'create', 'update', 'patch', 'delete'];

function lease(node: string, a: ResourceAttributes): Decision {
  if (!LEASE_VERBS.includes(a.verb)) return no('can only get, create, update, patch, or delete a node lease');
  if (a.namespace !== NODE_LEASE_NAMESPACE)
    return no(`can only access leases in the "${NODE_LEASE_NAMESPACE}" system namespace`);
  // The name of a create is not known here; NodeRestriction checks it.
  if (a.verb !== 'create' && a.name !== node)
    return no('can only access node lease with the same name as the requesting node');
  return YES;
}

function csiNode(node: string, a: ResourceAttributes): Decision {
  if (!LEASE_VERBS.includes(a.verb)) return no('can only get, create, update, patch, or delete a CSINode');
  if (a.subresource) return no('cannot authorize CSINode subresources');
  if (a.verb !== 'create' && a.name !== node)
    return no('can only access CSINode with the same name as the requesting node');
  return YES;
}

function nodeObject(node: string, a: ResourceAttributes): Decision {
  if (!a.subresource) {
    // Writes are limited to the node's own object by NodeRestriction.
    if (a.verb === 'create' || a.verb === 'update' || a.verb === 'patch') return YES;
    if (a.verb === 'get' || a.verb === 'list' || a.verb === 'watch') {
      if (a.name === node) return YES;
      if (!a.name) return no(`node '${node}' cannot read all nodes, only its own Node object`);
      return no(`node '${node}' cannot read '${a.name}', only its own Node object`);
    }
  } else if (a.subresource === 'status' && (a.verb === 'update' || a.verb === 'patch')) return YES;
  return NO;
}

function pod(graph: GraphSource, node: string, a: ResourceAttributes): Decision {
  if (!a.subresource) {
    if (a.verb === 'get') return related(graph, node, 'pod', a);
    if (a.verb === 'list' || a.verb === 'watch') {
      if (a.fieldSelector && fieldSelectorOf(a.fieldSelector) === node) return YES;
      if (a.name) return related(graph, node, 'pod', a);
      return no('can only list/watch pods with spec.nodeName field selector');
    }
    // Mirror pods; NodeRestriction limits both to pods bound to the node.
    if (a.verb === 'create' || a.verb === 'delete') return YES;
  } else if (a.subresource === 'status' && (a.verb === 'update' || a.verb === 'patch')) return YES;
  else if (a.subresource === 'eviction' && a.verb === 'create') return YES;
  return NO;
}

function fieldSelectorOf(raw: string): string | undefined {
  try {
    return fieldSelectorExactValue(parseFieldSelector(raw), 'spec.nodeName');
  } catch {
    return undefined; // a malformed selector is refused later with a 400; it scopes nothing here
  }
}
