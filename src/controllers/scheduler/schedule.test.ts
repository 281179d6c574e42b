import { describe, expect, it } from 'vitest';
import { fitErrorMessage, schedulePod } from './schedule.js';
import type { CSIStorageCapacity } from './types.js';
import { claim, csiNode, node, pod, storageClass, viewOf, volume, type World } from './fixtures.test-kit.js';

const wffc = storageClass('wffc');
const immediate = storageClass('imm', { wffc: false });
const csi2 = [csiNode('n1', [{}]), csiNode('n2', [{}])];
function capacity(zone: string, cap: string, max?: string): CSIStorageCapacity {
  return {
    metadata: { name: `cap-${zone}`, namespace: 'kube-system' },
    storageClassName: 'wffc',
    nodeTopology: { matchLabels: { zone } },
    capacity: cap,
    ...(max ? { maximumVolumeSize: max } : {}),
  };
}
const NOT_HELPFUL = (n: number, total: number): string =>
  `preemption: 0/${total} nodes are available: ${n} Preemption is not helpful for scheduling..`;

interface Case {
  name: string;
  world: World;
  pod: ReturnType<typeof pod>;
  node?: string;
  bindings?: Array<[string, string]>;
  provisions?: string[];
  message?: string;
}

const cases: Case[] = [
  {
    name: 'no volumes → least loaded node, then name',
    world: { nodes: [node('n2'), node('n1')] },
    pod: pod('p', []),
    node: 'n1',
  },
  {
    name: 'bound PV with node affinity → that node',
    world: {
      nodes: [node('n1'), node('n2')],
      claims: [claim('c', { bound: true, volumeName: 'pv' })],
      volumes: [volume('pv', { nodes: ['n2'], claim: 'c' })],
    },
    pod: pod('p', ['c']),
    node: 'n2',
  },
  {
    name: 'bound PV whose affinity no node satisfies',
    world: {
      nodes: [node('n1'), node('n2')],
      claims: [claim('c', { bound: true, volumeName: 'pv' })],
      volumes: [volume('pv', { nodes: ['n9'], claim: 'c' })],
    },
    pod: pod('p', ['c']),
    message: `0/2 nodes are available: 2 node(s) had volume node affinity conflict. ${NOT_HELPFUL(2, 2)}`,
  },
  {
    name: 'bound claim to a missing PV',
    world: { nodes: [node('n1')], claims: [claim('c', { bound: true, volumeName: 'gone' })] },
    pod: pod('p', ['c']),
    message: `0/1 nodes are available: 1 node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s). ${NOT_HELPFUL(1, 1)}`,
  },
  {
    name: 'WFFC claim + static PV on n2 only → n2, PV pre-bound',
    world: {
      nodes: [node('n1'), node('n2')],
      classes: [storageClass('wffc', { provisioner: 'kubernetes.io/no-provisioner' })],
      claims: [claim('c')],
      volumes: [volume('pv', { nodes: ['n2'] })],
    },
    pod: pod('p', ['c']),
    node: 'n2',
    bindings: [['c', 'pv']],
  },
  {
    name: 'WFFC static: the smallest fitting PV wins',
    world: {
      nodes: [node('n1')],
      classes: [wffc],
      csiNodes: csi2,
      claims: [claim('c', { size: '2Gi' })],
      volumes: [volume('big', { size: '10Gi' }), volume('small', { size: '1Gi' }), volume('mid', { size: '5Gi' })],
    },
    pod: pod('p', ['c']),
    node: 'n1',
    bindings: [['c', 'mid']],
  },
  {
    name: 'WFFC without matching PV and no provisioner → bind conflict on every node',
    world: {
      nodes: [node('n1'), node('n2')],
      classes: [storageClass('wffc', { provisioner: 'kubernetes.io/no-provisioner' })],
      claims: [claim('c')],
      volumes: [volume('pv', { nodes: ['n1'], size: '1Mi' })],
    },
    pod: pod('p', ['c']),
    message: `0/2 nodes are available: 2 node(s) didn't find available persistent volumes to bind. ${NOT_HELPFUL(2, 2)}`,
  },
  {
    name: 'WFFC provisioning restricted by allowedTopologies',
    world: {
      nodes: [node('n1', { zone: 'a' }), node('n2', { zone: 'b' })],
      classes: [storageClass('wffc', { zones: ['b'] })],
      csiNodes: csi2,
      claims: [claim('c')],
    },
    pod: pod('p', ['c']),
    node: 'n2',
    provisions: ['c'],
  },
  {
    name: 'WFFC provisioning needs the driver on the node CSINode',
    world: { nodes: [node('n1'), node('n2')], classes: [wffc], csiNodes: [csiNode('n2', [{}])], claims: [claim('c')] },
    pod: pod('p', ['c']),
    node: 'n2',
    provisions: ['c'],
  },
  {
    name: "WFFC provisioning needs the driver's topology keys as node labels",
    world: {
      nodes: [node('n1'), node('n2', { 'topology.hostpath.csi/node': 'n2' })],
      classes: [wffc],
      csiNodes: [
        csiNode('n1', [{ topologyKeys: ['topology.hostpath.csi/node'] }]),
        csiNode('n2', [{ topologyKeys: ['topology.hostpath.csi/node'] }]),
      ],
      claims: [claim('c')],
    },
    pod: pod('p', ['c']),
    node: 'n2',
    provisions: ['c'],
  },
  {
    name: 'claim already selected for another node',
    world: {
      nodes: [node('n1'), node('n2')],
      classes: [wffc],
      csiNodes: csi2,
      claims: [claim('c', { selectedNode: 'n2' })],
    },
    pod: pod('p', ['c']),
    node: 'n2',
    provisions: ['c'],
  },
  {
    name: 'unbound immediate claim → PreFilter rejection',
    world: { nodes: [node('n1')], classes: [immediate], claims: [claim('c', { cls: 'imm' })] },
    pod: pod('p', ['c']),
    message: `0/1 nodes are available: pod has unbound immediate PersistentVolumeClaims. ${NOT_HELPFUL(1, 1)}`,
  },
  {
    name: 'missing claim → PreFilter rejection',
    world: { nodes: [node('n1'), node('n2')] },
    pod: pod('p', ['nope']),
    message: `0/2 nodes are available: persistentvolumeclaim "nope" not found. ${NOT_HELPFUL(2, 2)}`,
  },
  {
    name: 'CSINode allocatable.count reached on n1 → n2',
    world: {
      nodes: [node('n1'), node('n2')],
      classes: [wffc],
      csiNodes: [csiNode('n1', [{ count: 1 }]), csiNode('n2', [{ count: 1 }])],
      claims: [
        claim('old', { bound: true, volumeName: 'pv-old' }),
        claim('new', { bound: true, volumeName: 'pv-new' }),
      ],
      volumes: [volume('pv-old', { claim: 'old' }), volume('pv-new', { claim: 'new' })],
      pods: [pod('a', ['old'], { nodeName: 'n1' })],
    },
    pod: pod('p', ['new']),
    node: 'n2',
  },
  {
    name: 'CSINode allocatable.count reached everywhere',
    world: {
      nodes: [node('n1')],
      classes: [wffc],
      csiNodes: [csiNode('n1', [{ count: 1 }])],
      claims: [claim('old', { bound: true, volumeName: 'pv-old' }), claim('new')],
      volumes: [volume('pv-old', { claim: 'old' })],
      pods: [pod('a', ['old'], { nodeName: 'n1' })],
    },
    pod: pod('p', ['new']),
    message:
      '0/1 nodes are available: 1 node(s) exceed max volume count. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod..',
  },
  {
    name: 'a volume already on the node does not count twice',
    world: {
      nodes: [node('n1')],
      csiNodes: [csiNode('n1', [{ count: 1 }])],
      claims: [claim('shared', { bound: true, volumeName: 'pv', modes: ['ReadWriteMany'] })],
      volumes: [volume('pv', { claim: 'shared' })],
      pods: [pod('a', ['shared'], { nodeName: 'n1' })],
    },
    pod: pod('p', ['shared']),
    node: 'n1',
  },
  {
    name: 'ReadWriteOncePod claim in use by another pod',
    world: {
      nodes: [node('n1'), node('n2')],
      claims: [claim('c', { bound: true, volumeName: 'pv', modes: ['ReadWriteOncePod'] })],
      volumes: [volume('pv', { claim: 'c', modes: ['ReadWriteOncePod'] })],
      pods: [pod('a', ['c'], { nodeName: 'n1' })],
    },
    pod: pod('p', ['c']),
    message:
      '0/2 nodes are available: 2 node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod..',
  },
  {
    name: 'not-ready and cordoned nodes are explained',
    world: {
      nodes: [node('n1', {}, { ready: false }), node('n2', {}, { unschedulable: true }), node('n3')],
      claims: [claim('c', { bound: true, volumeName: 'pv' })],
      volumes: [volume('pv', { nodes: ['n1'], claim: 'c' })],
    },
    pod: pod('p', ['c']),
    message:
      '0/3 nodes are available: 1 node(s) had untolerated taint {node.kubernetes.io/not-ready: }, 1 node(s) had volume node affinity conflict, 1 node(s) were unschedulable. ' +
      NOT_HELPFUL(3, 3),
  },
  {
    name: 'CSIStorageCapacity: only the node whose pool holds the request',
    world: {
      nodes: [node('n1', { zone: 'a' }), node('n2', { zone: 'b' })],
      classes: [wffc],
      csiNodes: csi2,
      claims: [claim('c', { size: '1Gi' })],
      csiDrivers: [{ metadata: { name: 'hostpath.csi.k8s.io' }, spec: { storageCapacity: true } }],
      capacities: [
        capacity('a', '500Mi'),
        capacity('b', '10Gi', '2Gi'),
        { ...capacity('b', '100Gi'), storageClassName: 'other' },
      ],
    },
    pod: pod('p', ['c']),
    node: 'n2',
    provisions: ['c'],
  },
  {
    name: 'CSIStorageCapacity: maximumVolumeSize too small everywhere',
    world: {
      nodes: [node('n1', { zone: 'a' }), node('n2', { zone: 'b' })],
      classes: [wffc],
      csiNodes: csi2,
      claims: [claim('c', { size: '3Gi' })],
      csiDrivers: [{ metadata: { name: 'hostpath.csi.k8s.io' }, spec: { storageCapacity: true } }],
      capacities: [capacity('a', '500Mi'), capacity('b', '10Gi', '2Gi')],
    },
    pod: pod('p', ['c']),
    message: `0/2 nodes are available: 2 node(s) did not have enough free storage. ${NOT_HELPFUL(2, 2)}`,
  },
  {
    name: 'CSIStorageCapacity ignored for drivers that did not opt in',
    world: {
      nodes: [node('n1', { zone: 'a' })],
      classes: [wffc],
      csiNodes: csi2,
      claims: [claim('c', { size: '3Gi' })],
      capacities: [capacity('a', '1Mi')],
    },
    pod: pod('p', ['c']),
    node: 'n1',
    provisions: ['c'],
  },
  {
    name: 'no nodes at all',
    world: {},
    pod: pod('p', []),
    message: 'no nodes available to schedule pods',
  },
];

describe('schedulePod', () => {
  it.each(cases)('$name', (c) => {
    const d = schedulePod(c.pod, viewOf(c.world));
    if (c.message !== undefined) {
      expect(d).toEqual({ kind: 'unschedulable', message: c.message });
      return;
    }
    expect(d.kind).toBe('fit');
    if (d.kind !== 'fit') return;
    expect(d.node).toBe(c.node);
    expect(d.volumes.staticBindings.map((b) => [b.claim.metadata?.name, b.volume.metadata?.name])).toEqual(
      c.bindings ?? [],
    );
    expect(d.volumes.provisions.map((x) => x.metadata?.name)).toEqual(c.provisions ?? []);
  });

  it('two claims of one pod never get the same static PV', () => {
    const w: World = {
      nodes: [node('n1')],
      classes: [storageClass('wffc', { provisioner: 'kubernetes.io/no-provisioner' })],
      claims: [claim('a'), claim('b')],
      volumes: [volume('pv1'), volume('pv2')],
    };
    const d = schedulePod(pod('p', ['a', 'b']), viewOf(w));
    expect(d.kind === 'fit' && d.volumes.staticBindings.map((b) => b.volume.metadata?.name).sort()).toEqual([
      'pv1',
      'pv2',
    ]);
    const one = schedulePod(pod('p', ['a', 'b']), viewOf({ ...w, volumes: [volume('pv1')] }));
    expect(one.kind).toBe('unschedulable');
  });
});

describe('fitErrorMessage', () => {
  it('sorts the reason histogram like kube', () => {
    expect(
      fitErrorMessage(3, null, [
        { code: 'UnschedulableAndUnresolvable', reasons: ["node(s) didn't find available persistent volumes to bind"] },
        {
          code: 'UnschedulableAndUnresolvable',
          reasons: [
            'node(s) had volume node affinity conflict',
            "node(s) didn't find available persistent volumes to bind",
          ],
        },
        { code: 'Unschedulable', reasons: ['node(s) exceed max volume count'] },
      ]),
    ).toBe(
      "0/3 nodes are available: 1 node(s) exceed max volume count, 1 node(s) had volume node affinity conflict, 2 node(s) didn't find available persistent volumes to bind. preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling..",
    );
  });
});

describe('generic ephemeral volumes', () => {
  const p = pod('web', []);
  p.spec!.volumes = [
    {
      name: 'scratch',
      ephemeral: {
        volumeClaimTemplate: { spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
      },
    },
  ];
  it('waits for the ephemeral volume controller', () => {
    expect(schedulePod(p, viewOf({ nodes: [node('n1')] }))).toEqual({
      kind: 'unschedulable',
      message: `0/1 nodes are available: waiting for ephemeral volume controller to create the persistentvolumeclaim "web-scratch". ${NOT_HELPFUL(1, 1)}`,
    });
  });
  it('refuses a claim of that name the pod does not own', () => {
    const d = schedulePod(
      p,
      viewOf({ nodes: [node('n1')], classes: [wffc], csiNodes: csi2, claims: [claim('web-scratch')] }),
    );
    expect(d.kind === 'unschedulable' && d.message).toContain(
      'PVC default/web-scratch was not created for pod default/web (pod is not owner)',
    );
  });
  it('schedules with the claim it owns', () => {
    const c = claim('web-scratch');
    c.metadata!.ownerReferences = [{ apiVersion: 'v1', kind: 'Pod', name: 'web', uid: 'uid-web', controller: true }];
    const d = schedulePod(p, viewOf({ nodes: [node('n1')], classes: [wffc], csiNodes: csi2, claims: [c] }));
    expect(d).toMatchObject({ kind: 'fit', node: 'n1' });
  });
});
