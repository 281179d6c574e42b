import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../resources/types.js';
import { nodeRestriction, type NodeAdmissionRequest } from './admission.js';

const n1 = { name: 'system:node:n1', groups: ['system:nodes', 'system:authenticated'] };
const node = (name: string, labels: Record<string, string> = {}, taints: unknown[] = []): KubeObject => ({
  metadata: { name, labels },
  spec: { taints },
});
const pod = (
  nodeName: string,
  labels: Record<string, string> = {},
  annotations: Record<string, string> = {},
): KubeObject => ({ metadata: { name: 'p', namespace: 'ns', labels, annotations }, spec: { nodeName } });
const claim = (status: Record<string, unknown>, labels: Record<string, string> = {}): KubeObject => ({
  metadata: { name: 'c', namespace: 'ns', labels, resourceVersion: '7' },
  spec: { volumeName: 'pv' },
  status,
});

type Req = Omit<NodeAdmissionRequest, 'user'>;
const cases: Array<{ name: string; req: Req; want: string | undefined }> = [
  {
    name: 'create own node with kubelet labels',
    req: {
      operation: 'create',
      group: '',
      resource: 'nodes',
      name: 'n1',
      obj: node('n1', {
        'kubernetes.io/hostname': 'n1',
        'node.kubernetes.io/exclude-from-external-load-balancers': '',
        'topology.hostpath.csi/node': 'n1',
      }),
    },
    want: undefined,
  },
  {
    name: 'create another node',
    req: { operation: 'create', group: '', resource: 'nodes', name: 'n2', obj: node('n2') },
    want: 'node "n1" is not allowed to modify node "n2"',
  },
  {
    name: 'patch another node',
    req: { operation: 'update', group: '', resource: 'nodes', name: 'n2', obj: node('n2'), old: node('n2') },
    want: 'node "n1" is not allowed to modify node "n2"',
  },
  {
    name: 'status of another node',
    req: {
      operation: 'update',
      group: '',
      resource: 'nodes',
      subresource: 'status',
      name: 'n2',
      obj: node('n2'),
      old: node('n2'),
    },
    want: 'node "n1" is not allowed to modify node "n2"',
  },
  {
    name: 'create own node with a role label',
    req: {
      operation: 'create',
      group: '',
      resource: 'nodes',
      name: 'n1',
      obj: node('n1', { 'node-role.kubernetes.io/master': '' }),
    },
    want: 'node "n1" is not allowed to set the following labels: node-role.kubernetes.io/master',
  },
  {
    name: 'own node gains a node-restriction label',
    req: {
      operation: 'update',
      group: '',
      resource: 'nodes',
      name: 'n1',
      obj: node('n1', { 'x.node-restriction.kubernetes.io/a': 'b' }),
      old: node('n1'),
    },
    want: 'is not allowed to modify labels: x.node-restriction.kubernetes.io/a',
  },
  {
    name: 'own node changes a kubelet-prefixed label',
    req: {
      operation: 'update',
      group: '',
      resource: 'nodes',
      name: 'n1',
      obj: node('n1', { 'kubelet.kubernetes.io/x': '2', app: 'y' }),
      old: node('n1', { 'kubelet.kubernetes.io/x': '1' }),
    },
    want: undefined,
  },
  {
    name: 'own node removes its taint',
    req: {
      operation: 'update',
      group: '',
      resource: 'nodes',
      name: 'n1',
      obj: node('n1'),
      old: node('n1', {}, [{ key: 'k', effect: 'NoSchedule' }]),
    },
    want: 'node "n1" is not allowed to modify taints',
  },
  {
    name: 'own lease',
    req: {
      operation: 'create',
      group: 'coordination.k8s.io',
      resource: 'leases',
      namespace: 'kube-node-lease',
      name: 'n1',
    },
    want: undefined,
  },
  {
    name: 'lease of another node',
    req: {
      operation: 'create',
      group: 'coordination.k8s.io',
      resource: 'leases',
      namespace: 'kube-node-lease',
      name: 'n2',
    },
    want: 'can only access node lease with the same name as the requesting node',
  },
  {
    name: 'CSINode of another node',
    req: { operation: 'create', group: 'storage.k8s.io', resource: 'csinodes', name: 'n2' },
    want: 'can only access CSINode with the same name as the requesting node',
  },
  {
    name: 'own CSINode',
    req: { operation: 'create', group: 'storage.k8s.io', resource: 'csinodes', name: 'n1' },
    want: undefined,
  },
  {
    name: 'status of a pod bound to it',
    req: {
      operation: 'update',
      group: '',
      resource: 'pods',
      subresource: 'status',
      namespace: 'ns',
      name: 'p',
      obj: pod('n1'),
      old: pod('n1'),
    },
    want: undefined,
  },
  {
    name: 'status of a pod bound elsewhere',
    req: {
      operation: 'update',
      group: '',
      resource: 'pods',
      subresource: 'status',
      namespace: 'ns',
      name: 'p',
      obj: pod('n2'),
      old: pod('n2'),
    },
    want: 'node "n1" can only update pod status for pods with spec.nodeName set to itself',
  },
  {
    name: 'labels through pod status',
    req: {
      operation: 'update',
      group: '',
      resource: 'pods',
      subresource: 'status',
      namespace: 'ns',
      name: 'p',
      obj: pod('n1', { a: 'b' }),
      old: pod('n1'),
    },
    want: 'node "n1" cannot update labels through pod status',
  },
  {
    name: 'evict a pod bound to it',
    req: {
      operation: 'create',
      group: '',
      resource: 'pods',
      subresource: 'eviction',
      namespace: 'ns',
      name: 'p',
      old: pod('n1'),
    },
    want: undefined,
  },
  {
    name: 'evict a pod bound elsewhere',
    req: {
      operation: 'create',
      group: '',
      resource: 'pods',
      subresource: 'eviction',
      namespace: 'ns',
      name: 'p',
      old: pod('n2'),
    },
    want: 'node n1 can only evict pods with spec.nodeName set to itself',
  },
  {
    name: 'delete a pod bound to it',
    req: { operation: 'delete', group: '', resource: 'pods', namespace: 'ns', name: 'p', old: pod('n1') },
    want: undefined,
  },
  {
    name: 'delete a pod bound elsewhere',
    req: { operation: 'delete', group: '', resource: 'pods', namespace: 'ns', name: 'p', old: pod('n2') },
    want: 'node "n1" can only delete pods with spec.nodeName set to itself',
  },
  {
    name: 'create a pod',
    req: { operation: 'create', group: '', resource: 'pods', namespace: 'ns', name: 'p', obj: pod('n1') },
    want: 'pod does not have "kubernetes.io/config.mirror" annotation, node "n1" can only create mirror pods',
  },
  {
    name: 'update a pod',
    req: {
      operation: 'update',
      group: '',
      resource: 'pods',
      namespace: 'ns',
      name: 'p',
      obj: pod('n1'),
      old: pod('n1'),
    },
    want: 'unexpected operation "update", node "n1" can only create and delete mirror pods',
  },
  {
    name: 'claim capacity after expansion',
    req: {
      operation: 'update',
      group: '',
      resource: 'persistentvolumeclaims',
      subresource: 'status',
      namespace: 'ns',
      name: 'c',
      obj: claim({ phase: 'Bound', capacity: { storage: '2Gi' } }),
      old: claim({ phase: 'Bound', capacity: { storage: '1Gi' } }),
    },
    want: undefined,
  },
  {
    name: 'claim phase through status',
    req: {
      operation: 'update',
      group: '',
      resource: 'persistentvolumeclaims',
      subresource: 'status',
      namespace: 'ns',
      name: 'c',
      obj: claim({ phase: 'Lost' }),
      old: claim({ phase: 'Bound' }),
    },
    want: 'node "n1" is not allowed to update fields other than status.capacity and status.conditions',
  },
];

describe('NodeRestriction (n1 asking)', () => {
  it.each(cases)('$name', ({ req, want }) => {
    expect(nodeRestriction({ user: n1, ...req })).toBe(want);
  });

  it('leaves other users alone', () => {
    const admin = { name: 'admin', groups: ['system:masters'] };
    expect(
      nodeRestriction({
        user: admin,
        operation: 'create',
        group: '',
        resource: 'nodes',
        name: 'n2',
        obj: node('n2', { 'node-role.kubernetes.io/master': '' }),
      }),
    ).toBeUndefined();
  });
});
