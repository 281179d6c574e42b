import { describe, expect, it } from 'vitest';
import { desiredAttachments, podTerminated, type DesiredInputs } from './desired.js';
import { nodeLiveness } from './nodehealth.js';
import { multiAttachMessage, reconcileAttachments, type NodeState } from './reconcile.js';
import {
  ANN_CONTROLLER_MANAGED_ATTACH_DETACH,
  attachmentName,
  uniqueVolumeName,
  type ActualAttachment,
  type CSIDriver,
  type DesiredAttachment,
  type Node,
  type PersistentVolume,
  type PersistentVolumeClaim,
  type Pod,
} from './types.js';

const D = 'hostpath.csi.k8s.io';
const uniq = (pv: string): string => uniqueVolumeName(D, `h-${pv}`);

function want(pv: string, node: string, pods: string[] = ['p'], multi = false): DesiredAttachment {
  return {
    name: attachmentName(`h-${pv}`, D, node),
    pvName: pv,
    driver: D,
    volumeHandle: `h-${pv}`,
    nodeName: node,
    uniqueName: uniq(pv),
    multiAttachAllowed: multi,
    pods: pods.map((p) => ({ namespace: 'default', name: p, uid: `uid-${p}` })),
  };
}
function have(pv: string, node: string, o: { attached?: boolean; deleting?: boolean } = {}): ActualAttachment {
  return {
    name: attachmentName(`h-${pv}`, D, node),
    pvName: pv,
    nodeName: node,
    attacher: D,
    attached: o.attached ?? false,
    deleting: o.deleting ?? false,
    uniqueName: uniq(pv),
  };
}
function nodeState(name: string, o: Partial<NodeState> = {}): NodeState {
  return { name, gone: false, managed: true, ready: true, volumesInUse: [], volumesAttached: [], ...o };
}
const nodesOf = (...n: NodeState[]): Map<string, NodeState> => new Map(n.map((x) => [x.name, x]));
const desiredOf = (...d: DesiredAttachment[]): Map<string, DesiredAttachment> => new Map(d.map((x) => [x.name, x]));
const kinds = (ops: ReturnType<typeof reconcileAttachments>): string[] =>
  ops.map((o) =>
    o.kind === 'create'
      ? `create ${o.attachment.pvName}@${o.attachment.nodeName}`
      : o.kind === 'delete'
        ? `delete ${o.pvName}@${o.nodeName}${o.force ? ' force' : ''}`
        : o.kind === 'nodeStatus'
          ? `status ${o.nodeName} [${o.volumesAttached.map((v) => v.name).join(',')}]`
          : o.kind === 'awaitingFencing'
            ? `fence ${o.pod.name}`
            : `warn ${o.pod.name}`,
  );

describe('reconcileAttachments', () => {
  it.each<{
    name: string;
    desired: DesiredAttachment[];
    actual: ActualAttachment[];
    nodes: NodeState[];
    ops: string[];
  }>([
    {
      name: 'missing attachment → create',
      desired: [want('pv1', 'n1')],
      actual: [],
      nodes: [nodeState('n1')],
      ops: ['create pv1@n1'],
    },
    {
      name: 'present and attached → report in volumesAttached',
      desired: [want('pv1', 'n1')],
      actual: [have('pv1', 'n1', { attached: true })],
      nodes: [nodeState('n1')],
      ops: [`status n1 [${uniq('pv1')}]`],
    },
    {
      name: 'already reported → nothing',
      desired: [want('pv1', 'n1')],
      actual: [have('pv1', 'n1', { attached: true })],
      nodes: [nodeState('n1', { volumesAttached: [{ name: uniq('pv1'), devicePath: '' }] })],
      ops: [],
    },
    {
      name: 'not needed but still in use on the node → wait',
      desired: [],
      actual: [have('pv1', 'n1', { attached: true })],
      nodes: [
        nodeState('n1', { volumesInUse: [uniq('pv1')], volumesAttached: [{ name: uniq('pv1'), devicePath: '' }] }),
      ],
      ops: [],
    },
    {
      name: 'not needed, not in use → delist then delete',
      desired: [],
      actual: [have('pv1', 'n1', { attached: true })],
      nodes: [nodeState('n1', { volumesAttached: [{ name: uniq('pv1'), devicePath: '' }] })],
      ops: ['status n1 []', 'delete pv1@n1'],
    },
    {
      name: 'node deleted → delete even if it said in use',
      desired: [],
      actual: [have('pv1', 'gone', { attached: true })],
      nodes: [],
      ops: ['delete pv1@gone force'],
    },
    {
      name: 'node gone (out of service) → force delete',
      desired: [],
      actual: [have('pv1', 'n1', { attached: true })],
      nodes: [nodeState('n1', { gone: true, volumesInUse: [uniq('pv1')] })],
      ops: ['delete pv1@n1 force'],
    },
    {
      name: 'node not controller-managed → left alone',
      desired: [],
      actual: [have('pv1', 'n1')],
      nodes: [nodeState('n1', { managed: false })],
      ops: [],
    },
    {
      name: 'being deleted → no second delete, no report',
      desired: [],
      actual: [have('pv1', 'n1', { attached: true, deleting: true })],
      nodes: [nodeState('n1')],
      ops: [],
    },
    {
      name: 'RWO attached elsewhere and needed there → Multi-Attach',
      desired: [want('pv1', 'n1', ['a']), want('pv1', 'n2', ['b'])],
      actual: [have('pv1', 'n1')],
      nodes: [nodeState('n1'), nodeState('n2')],
      ops: ['warn b'],
    },
    {
      name: 'RWX may attach twice',
      desired: [want('pv1', 'n1', ['a'], true), want('pv1', 'n2', ['b'], true)],
      actual: [have('pv1', 'n1')],
      nodes: [nodeState('n1'), nodeState('n2')],
      ops: ['create pv1@n2'],
    },
    {
      name: 'RWO wanted on two nodes at once → first by name wins',
      desired: [want('pv1', 'n1', ['a']), want('pv1', 'n2', ['b'])],
      actual: [],
      nodes: [nodeState('n1'), nodeState('n2')],
      ops: [],
    },
    {
      name: 'RWO moving: old node released first, then the new one waits for the object to go',
      desired: [want('pv1', 'n2', ['b'])],
      actual: [have('pv1', 'n1', { attached: true })],
      nodes: [nodeState('n1', { volumesAttached: [{ name: uniq('pv1'), devicePath: '' }] }), nodeState('n2')],
      ops: ['status n1 []', 'delete pv1@n1', 'warn b'],
    },
    {
      name: 'RWO held by a node not ready and not fenced: wait for it, and say why',
      desired: [want('pv1', 'n2', ['b'])],
      actual: [have('pv1', 'n1', { attached: true })],
      nodes: [
        nodeState('n1', {
          ready: false,
          volumesInUse: [uniq('pv1')],
          volumesAttached: [{ name: uniq('pv1'), devicePath: '' }],
        }),
        nodeState('n2'),
      ],
      ops: ['warn b', 'fence b'],
    },
    {
      name: 'RWO held by a fenced node (out of service, lease expired): force detach, no fencing warning',
      desired: [want('pv1', 'n2', ['b'])],
      actual: [have('pv1', 'n1', { attached: true })],
      nodes: [nodeState('n1', { ready: false, gone: true, volumesInUse: [uniq('pv1')] }), nodeState('n2')],
      ops: ['delete pv1@n1 force', 'warn b'],
    },
  ])('$name', ({ desired, actual, nodes, ops }) => {
    const got = kinds(reconcileAttachments({ desired: desiredOf(...desired), actual, nodes: nodesOf(...nodes) }));
    if (ops.length === 0 && desired.length === 2 && actual.length === 0) {
      // both are new: exactly one create, one warning
      expect(got.filter((x) => x.startsWith('create'))).toHaveLength(1);
      expect(got.filter((x) => x.startsWith('warn'))).toHaveLength(1);
      return;
    }
    expect(got).toEqual(ops);
  });
});

describe('multiAttachMessage', () => {
  const viewer = { namespace: 'a', name: 'new', uid: 'u' };
  it.each([
    [
      [{ namespace: 'a', name: 'p1', uid: '1' }],
      'Multi-Attach error for volume "pv" Volume is already used by pod(s) p1',
    ],
    [
      [
        { namespace: 'a', name: 'p1', uid: '1' },
        { namespace: 'b', name: 'x', uid: '2' },
      ],
      'Multi-Attach error for volume "pv" Volume is already used by pod(s) p1 and 1 pod(s) in different namespaces',
    ],
    [
      [{ namespace: 'b', name: 'x', uid: '2' }],
      'Multi-Attach error for volume "pv" Volume is already used by 1 pod(s) in different namespaces',
    ],
    [
      [],
      `Multi-Attach error for volume "pv" Volume is already exclusively attached to one node and can't be attached to another`,
    ],
  ])('%j', (blocking, msg) => expect(multiAttachMessage('pv', viewer, blocking)).toBe(msg));
});

describe('desiredAttachments', () => {
  const managed = (name: string): Node => ({
    metadata: { name, annotations: { [ANN_CONTROLLER_MANAGED_ATTACH_DETACH]: 'true' } },
  });
  const pvc = (name: string, pv?: string): PersistentVolumeClaim => ({
    metadata: { name, namespace: 'default' },
    spec: pv ? { volumeName: pv } : {},
  });
  const pv = (name: string, driver = D, modes = ['ReadWriteOnce']): PersistentVolume => ({
    metadata: { name },
    spec: { accessModes: modes, csi: { driver, volumeHandle: `h-${name}` } },
  });
  const pod = (name: string, node: string | undefined, claims: string[], phase?: string): Pod => ({
    metadata: { name, namespace: 'default', uid: `uid-${name}` },
    spec: {
      containers: [],
      ...(node ? { nodeName: node } : {}),
      volumes: claims.map((c) => ({ name: c, persistentVolumeClaim: { claimName: c } })),
    },
    ...(phase ? { status: { phase } } : {}),
  });
  const inputs = (pods: Pod[], o: { drivers?: CSIDriver[]; gone?: string[]; nodes?: Node[] } = {}): DesiredInputs => {
    const claims = [pvc('c1', 'pv1'), pvc('c2', 'pv2'), pvc('unbound'), pvc('nfs', 'pv-nfs'), pvc('noattach', 'pv-na')];
    const vols = [
      pv('pv1'),
      pv('pv2'),
      { metadata: { name: 'pv-nfs' }, spec: { nfs: { server: 's', path: '/' } } },
      pv('pv-na', 'noattach.csi'),
    ];
    const nodes = o.nodes ?? [managed('n1'), managed('n2'), { metadata: { name: 'kubelet-managed' } }];
    return {
      pods,
      claim: (_ns, n) => claims.find((c) => c.metadata?.name === n),
      volume: (n) => vols.find((v) => v.metadata?.name === n),
      csiDriver: (n) =>
        (o.drivers ?? [{ metadata: { name: 'noattach.csi' }, spec: { attachRequired: false } }]).find(
          (d) => d.metadata?.name === n,
        ),
      node: (n) => nodes.find((x) => x.metadata?.name === n),
      isGone: (n) => (o.gone ?? []).includes(n),
    };
  };
  it('one attachment per (volume, node) for bound CSI claims of attach-required drivers', () => {
    const d = desiredAttachments(
      inputs([
        pod('a', 'n1', ['c1', 'unbound', 'nfs', 'noattach']),
        pod('b', 'n1', ['c1']),
        pod('c', 'n2', ['c2']),
        pod('pending', undefined, ['c2']),
        pod('done', 'n2', ['c1'], 'Succeeded'),
        pod('k', 'kubelet-managed', ['c2']),
      ]),
    );
    expect([...d.values()].map((x) => [x.pvName, x.nodeName, x.pods.map((p) => p.name)])).toEqual([
      ['pv1', 'n1', ['a', 'b']],
      ['pv2', 'n2', ['c']],
    ]);
    expect(d.get(attachmentName('h-pv1', D, 'n1'))?.multiAttachAllowed).toBe(false);
  });
  it('nothing is desired on a gone node', () => {
    expect(desiredAttachments(inputs([pod('a', 'n1', ['c1'])], { gone: ['n1'] })).size).toBe(0);
  });
});

describe('nodeLiveness', () => {
  const tainted: Node = {
    metadata: { name: 'n' },
    spec: { taints: [{ key: 'node.kubernetes.io/out-of-service', value: 'nodeshutdown', effect: 'NoExecute' }] },
  };
  const lease = {
    metadata: { name: 'n' },
    spec: { renewTime: '2026-01-01T00:00:00.000000Z', leaseDurationSeconds: 40 },
  };
  const t0 = Date.parse('2026-01-01T00:00:00Z');
  it.each<[string, Node | undefined, number, string]>([
    ['deleted', undefined, t0, 'gone'],
    ['healthy without taint', { metadata: { name: 'n' } }, t0 + 3_600_000, 'alive'],
    ['tainted, lease still valid', tainted, t0 + 10_000, 'dying'],
    ['tainted, lease expired but within grace', tainted, t0 + 45_000, 'dying'],
    ['tainted, lease expired beyond grace', tainted, t0 + 51_000, 'gone'],
  ])('%s', (_, node, now, kind) => expect(nodeLiveness(node, lease, now, 10_000).kind).toBe(kind));
});

describe('podTerminated', () => {
  const del = '2026-01-01T00:00:00Z';
  it.each<[string, Pod, boolean]>([
    ['running', { metadata: { name: 'p' }, status: { phase: 'Running' } }, false],
    ['succeeded', { metadata: { name: 'p' }, status: { phase: 'Succeeded' } }, true],
    [
      'deleting, nothing running',
      { metadata: { name: 'p', deletionTimestamp: del }, status: { phase: 'Running' } },
      true,
    ],
    [
      'deleting, a container still running',
      {
        metadata: { name: 'p', deletionTimestamp: del },
        status: {
          containerStatuses: [
            { name: 'c', image: 'i', imageID: '', ready: true, restartCount: 0, state: { running: {} } },
          ],
        },
      },
      false,
    ],
  ])('%s → %s', (_, p, want) => expect(podTerminated(p)).toBe(want));
});
