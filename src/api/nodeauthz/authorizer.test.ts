import type { PersistentVolume, Pod } from 'kubernetes-types/core/v1.js';
import type { VolumeAttachment } from 'kubernetes-types/storage/v1.js';
import { describe, expect, it } from 'vitest';
import {
  ADMIN_POLICY,
  forbiddenFor,
  newGroupRulesAuthorizer,
  newUnionAuthorizer,
  type RequestAttributes,
} from '../authz.js';
import { ALL_RESOURCES } from '../resources/index.js';
import { newNodeAuthorizer } from './authorizer.js';
import type { GraphSource } from './graph.js';

// n1 runs pod p1 (claim c1 → pv1 with a CSI node-stage secret, secret s1 as a volume, configmap cm1
// through envFrom, pull secret pull1); n2 runs p2 (claim c2 → pv2, configmap cm2). va1 is for n1.
const pods: Pod[] = [
  {
    metadata: { name: 'p1', namespace: 'ns' },
    spec: {
      nodeName: 'n1',
      imagePullSecrets: [{ name: 'pull1' }],
      containers: [{ name: 'c', envFrom: [{ configMapRef: { name: 'cm1' } }] }],
      volumes: [
        { name: 'v', persistentVolumeClaim: { claimName: 'c1' } },
        { name: 's', secret: { secretName: 's1' } },
        { name: 'e', ephemeral: {} },
      ],
    },
  },
  {
    metadata: { name: 'p2', namespace: 'ns' },
    spec: {
      nodeName: 'n2',
      containers: [{ name: 'c', env: [{ name: 'X', valueFrom: { configMapKeyRef: { name: 'cm2', key: 'k' } } }] }],
      volumes: [{ name: 'v', persistentVolumeClaim: { claimName: 'c2' } }],
    },
  },
  {
    metadata: { name: 'unbound', namespace: 'ns' },
    spec: { containers: [{ name: 'c' }], volumes: [{ name: 's', secret: { secretName: 's3' } }] },
  },
];
const pvs: PersistentVolume[] = [
  {
    metadata: { name: 'pv1' },
    spec: {
      claimRef: { namespace: 'ns', name: 'c1' },
      csi: { driver: 'd', volumeHandle: 'h', nodeStageSecretRef: { namespace: 'sec', name: 'stage1' } },
    },
  },
  {
    metadata: { name: 'pv2' },
    spec: {
      claimRef: { namespace: 'ns', name: 'c2' },
      csi: { driver: 'd', volumeHandle: 'h2', nodeStageSecretRef: { namespace: 'sec', name: 'stage2' } },
    },
  },
  { metadata: { name: 'pv-eph' }, spec: { claimRef: { namespace: 'ns', name: 'p1-e' } } },
];
const vas: VolumeAttachment[] = [
  { metadata: { name: 'va1' }, spec: { attacher: 'd', nodeName: 'n1', source: { persistentVolumeName: 'pv1' } } },
  { metadata: { name: 'va2' }, spec: { attacher: 'd', nodeName: 'n2', source: { persistentVolumeName: 'pv2' } } },
];
const graph: GraphSource = {
  podsOn: (node) => pods.filter((p) => p.spec?.nodeName === node),
  pvsClaimedBy: (ns, n) => pvs.filter((p) => p.spec?.claimRef?.namespace === ns && p.spec.claimRef.name === n),
  pv: (n) => pvs.find((p) => p.metadata?.name === n),
  volumeAttachment: (n) => vas.find((v) => v.metadata?.name === n),
};

// Stowage's server: the Node authorizer first, then the group rules (kube's Node,RBAC).
const authz = newUnionAuthorizer([newNodeAuthorizer(graph), newGroupRulesAuthorizer(ADMIN_POLICY)]);
const n1 = { name: 'system:node:n1', groups: ['system:nodes', 'system:authenticated'] };

interface Case {
  verb: string;
  resource: string;
  group?: string;
  sub?: string;
  ns?: string;
  name?: string;
  fieldSelector?: string;
  /** '' = allowed; 'x' = refused with no reason (no rule grants it); otherwise the refusal's reason. */
  want: string;
}
const attrs = (c: Case, user = n1): RequestAttributes => ({
  kind: 'resource',
  user,
  verb: c.verb,
  group: c.group ?? '',
  resource: c.resource,
  subresource: c.sub,
  namespace: c.ns,
  name: c.name,
  fieldSelector: c.fieldSelector,
});

const NO_REL = "no relationship found between node 'n1' and this object";
const cases: Case[] = [
  // Node objects: reads of its own only; writes pass to NodeRestriction.
  { verb: 'get', resource: 'nodes', name: 'n1', want: '' },
  { verb: 'get', resource: 'nodes', name: 'n2', want: "node 'n1' cannot read 'n2', only its own Node object" },
  { verb: 'list', resource: 'nodes', want: "node 'n1' cannot read all nodes, only its own Node object" },
  { verb: 'watch', resource: 'nodes', name: 'n1', want: '' },
  { verb: 'create', resource: 'nodes', want: '' },
  { verb: 'patch', resource: 'nodes', name: 'n2', want: '' },
  { verb: 'patch', resource: 'nodes', sub: 'status', name: 'n1', want: '' },
  { verb: 'delete', resource: 'nodes', name: 'n1', want: 'x' },
  // Leases: its own, in kube-node-lease.
  ...['get', 'update', 'patch', 'delete'].map((verb) => ({
    verb,
    resource: 'leases',
    group: 'coordination.k8s.io',
    ns: 'kube-node-lease',
    name: 'n1',
    want: '',
  })),
  { verb: 'create', resource: 'leases', group: 'coordination.k8s.io', ns: 'kube-node-lease', want: '' },
  {
    verb: 'update',
    resource: 'leases',
    group: 'coordination.k8s.io',
    ns: 'kube-node-lease',
    name: 'n2',
    want: 'can only access node lease with the same name as the requesting node',
  },
  {
    verb: 'get',
    resource: 'leases',
    group: 'coordination.k8s.io',
    ns: 'default',
    name: 'n1',
    want: 'can only access leases in the "kube-node-lease" system namespace',
  },
  {
    verb: 'list',
    resource: 'leases',
    group: 'coordination.k8s.io',
    ns: 'kube-node-lease',
    want: 'can only get, create, update, patch, or delete a node lease',
  },
  // CSINodes: its own.
  ...['get', 'update', 'patch', 'delete'].map((verb) => ({
    verb,
    resource: 'csinodes',
    group: 'storage.k8s.io',
    name: 'n1',
    want: '',
  })),
  {
    verb: 'get',
    resource: 'csinodes',
    group: 'storage.k8s.io',
    name: 'n2',
    want: 'can only access CSINode with the same name as the requesting node',
  },
  {
    verb: 'list',
    resource: 'csinodes',
    group: 'storage.k8s.io',
    want: 'can only get, create, update, patch, or delete a CSINode',
  },
  // Pods: those bound to it; list/watch only scoped to it; status/eviction/create/delete pass to NodeRestriction.
  { verb: 'get', resource: 'pods', ns: 'ns', name: 'p1', want: '' },
  { verb: 'get', resource: 'pods', ns: 'ns', name: 'p2', want: NO_REL },
  { verb: 'get', resource: 'pods', ns: 'ns', name: 'unbound', want: NO_REL },
  { verb: 'list', resource: 'pods', fieldSelector: 'spec.nodeName=n1', want: '' },
  { verb: 'watch', resource: 'pods', fieldSelector: 'spec.nodeName=n1', want: '' },
  {
    verb: 'list',
    resource: 'pods',
    fieldSelector: 'spec.nodeName=n2',
    want: 'can only list/watch pods with spec.nodeName field selector',
  },
  { verb: 'list', resource: 'pods', ns: 'ns', want: 'can only list/watch pods with spec.nodeName field selector' },
  { verb: 'patch', resource: 'pods', sub: 'status', ns: 'ns', name: 'p2', want: '' },
  { verb: 'create', resource: 'pods', sub: 'eviction', ns: 'ns', name: 'p1', want: '' },
  { verb: 'update', resource: 'pods', ns: 'ns', name: 'p1', want: 'x' },
  { verb: 'create', resource: 'pods', sub: 'binding', ns: 'ns', name: 'p1', want: 'x' },
  // Claims, volumes, attachments: those of its pods (get; one named object by list/watch).
  { verb: 'get', resource: 'persistentvolumeclaims', ns: 'ns', name: 'c1', want: '' },
  { verb: 'get', resource: 'persistentvolumeclaims', ns: 'ns', name: 'p1-e', want: '' },
  { verb: 'get', resource: 'persistentvolumeclaims', ns: 'ns', name: 'c2', want: NO_REL },
  { verb: 'list', resource: 'persistentvolumeclaims', ns: 'ns', want: 'No Object name found' },
  {
    verb: 'update',
    resource: 'persistentvolumeclaims',
    ns: 'ns',
    name: 'c1',
    want: 'can only get individual resources of this type',
  },
  { verb: 'patch', resource: 'persistentvolumeclaims', sub: 'status', ns: 'ns', name: 'c1', want: '' },
  { verb: 'patch', resource: 'persistentvolumeclaims', sub: 'status', ns: 'ns', name: 'c2', want: NO_REL },
  { verb: 'get', resource: 'persistentvolumes', name: 'pv1', want: '' },
  { verb: 'watch', resource: 'persistentvolumes', name: 'pv1', want: '' },
  { verb: 'get', resource: 'persistentvolumes', name: 'pv-eph', want: '' },
  { verb: 'get', resource: 'persistentvolumes', name: 'pv2', want: NO_REL },
  { verb: 'get', resource: 'persistentvolumes', name: 'nope', want: NO_REL },
  {
    verb: 'delete',
    resource: 'persistentvolumes',
    name: 'pv1',
    want: 'can only get individual resources of this type',
  },
  { verb: 'get', resource: 'volumeattachments', group: 'storage.k8s.io', name: 'va1', want: '' },
  { verb: 'get', resource: 'volumeattachments', group: 'storage.k8s.io', name: 'va2', want: NO_REL },
  { verb: 'list', resource: 'volumeattachments', group: 'storage.k8s.io', want: 'No Object name found' },
  {
    verb: 'patch',
    resource: 'volumeattachments',
    group: 'storage.k8s.io',
    sub: 'status',
    name: 'va1',
    want: 'can only get individual resources of this type',
  },
  // Secrets and configmaps: those its pods (and their volumes) name.
  { verb: 'get', resource: 'secrets', ns: 'ns', name: 's1', want: '' },
  { verb: 'get', resource: 'secrets', ns: 'ns', name: 'pull1', want: '' },
  { verb: 'get', resource: 'secrets', ns: 'sec', name: 'stage1', want: '' },
  { verb: 'get', resource: 'secrets', ns: 'sec', name: 'stage2', want: NO_REL },
  { verb: 'get', resource: 'secrets', ns: 'ns', name: 's3', want: NO_REL },
  { verb: 'list', resource: 'secrets', ns: 'ns', name: 's1', want: '' },
  { verb: 'list', resource: 'secrets', ns: 'ns', want: 'No Object name found' },
  { verb: 'list', resource: 'secrets', want: 'can only read namespaced object of this type' },
  { verb: 'create', resource: 'secrets', ns: 'ns', want: 'can only read resources of this type' },
  { verb: 'get', resource: 'configmaps', ns: 'ns', name: 'cm1', want: '' },
  { verb: 'watch', resource: 'configmaps', ns: 'ns', name: 'cm1', want: '' },
  { verb: 'get', resource: 'configmaps', ns: 'ns', name: 'cm2', want: NO_REL },
  { verb: 'delete', resource: 'configmaps', ns: 'ns', name: 'cm1', want: 'can only read resources of this type' },
  // The static system:node rules.
  { verb: 'create', resource: 'events', ns: 'ns', want: '' },
  { verb: 'patch', resource: 'events', group: 'events.k8s.io', ns: 'ns', name: 'e', want: '' },
  { verb: 'delete', resource: 'events', ns: 'ns', name: 'e', want: 'x' },
  { verb: 'list', resource: 'csidrivers', group: 'storage.k8s.io', want: '' },
  { verb: 'create', resource: 'csidrivers', group: 'storage.k8s.io', want: 'x' },
  { verb: 'list', resource: 'storageclasses', group: 'storage.k8s.io', want: 'x' },
  { verb: 'create', resource: 'namespaces', want: 'x' },
  { verb: 'create', resource: 'selfsubjectaccessreviews', group: 'authorization.k8s.io', want: '' },
];

describe('Node authorizer (n1 asking; n2 is the other node)', () => {
  it.each(
    cases.map((c) => ({
      ...c,
      label: `${c.verb} ${c.resource}${c.sub ? '/' + c.sub : ''} ${c.ns ?? ''}/${c.name ?? c.fieldSelector ?? ''}`,
    })),
  )('$label', (c) => {
    const d = authz.authorize(attrs(c));
    if (c.want === '') expect(d).toMatchObject({ allowed: true });
    else expect(d).toEqual({ allowed: false, reason: c.want === 'x' ? '' : c.want });
  });

  it("the 403 names the rule in kube-apiserver's words", () => {
    const a = attrs({ verb: 'get', resource: 'secrets', ns: 'ns', name: 's3', want: '' });
    expect(forbiddenFor(a, authz.authorize(a)).message).toBe(
      `secrets "s3" is forbidden: User "system:node:n1" cannot get resource "secrets" in API group "" in the namespace "ns": ${NO_REL}`,
    );
  });

  it('has no opinion about other users; a user named like a node but outside system:nodes is not one', () => {
    const admin = { name: 'admin', groups: ['system:masters', 'system:authenticated'] };
    expect(
      authz.authorize(attrs({ verb: 'delete', resource: 'secrets', ns: 'ns', name: 's1', want: '' }, admin)).allowed,
    ).toBe(true);
    const impostor = { name: 'system:node:n1', groups: ['system:authenticated'] };
    expect(
      authz.authorize(attrs({ verb: 'get', resource: 'secrets', ns: 'ns', name: 's1', want: '' }, impostor)).allowed,
    ).toBe(false);
    const nameless = { name: 'kubelet', groups: ['system:nodes', 'system:authenticated'] };
    expect(authz.authorize(attrs({ verb: 'get', resource: 'nodes', name: 'n1', want: '' }, nameless)).allowed).toBe(
      false,
    );
  });

  it('rules of a node are the static ones and say they are incomplete', () => {
    const r = authz.rulesFor(n1, 'ns');
    expect(r.incomplete).toBe(true);
    expect(r.resourceRules).toContainEqual({
      verbs: ['create', 'update', 'patch'],
      apiGroups: ['', 'events.k8s.io'],
      resources: ['events'],
    });
  });

  it('over every kind served and every verb, a node reaches nothing unrelated to it beyond the static grants', () => {
    // Object "zz" (in namespace "ns" when namespaced) is related to no node. What n1 may still do
    // with it is what kube allows every node, narrowed later by NodeRestriction where marked.
    const allowedForAnyNode: Record<string, readonly string[]> = {
      '/nodes': ['create', 'update', 'patch'], // NodeRestriction: only its own
      '/pods': ['create', 'delete'], // NodeRestriction: mirror pods, pods bound to it
      '/events': ['create', 'update', 'patch'],
      'events.k8s.io/events': ['create', 'update', 'patch'],
      '/services': ['get', 'list', 'watch'],
      'storage.k8s.io/csidrivers': ['get', 'list', 'watch'],
      'storage.k8s.io/csinodes': ['create'], // NodeRestriction: only its own
      'node.k8s.io/runtimeclasses': ['get', 'list', 'watch'],
      'authentication.k8s.io/selfsubjectreviews': ['create'],
      'authorization.k8s.io/selfsubjectaccessreviews': ['create'],
      'authorization.k8s.io/selfsubjectrulesreviews': ['create'],
    };
    const verbs = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection'];
    const got: Record<string, string[]> = {};
    const want: Record<string, string[]> = {};
    for (const d of ALL_RESOURCES) {
      const key = `${d.group}/${d.plural}`;
      const named = (v: string): boolean => v === 'get' || v === 'update' || v === 'patch' || v === 'delete';
      got[key] = verbs.filter(
        (verb) =>
          authz.authorize(
            attrs({
              verb,
              resource: d.plural,
              group: d.group,
              ns: d.namespaced ? 'ns' : undefined,
              name: named(verb) ? 'zz' : undefined,
              want: '',
            }),
          ).allowed,
      );
      want[key] = [...(allowedForAnyNode[key] ?? [])];
    }
    expect(got).toEqual(want);
  });
});
