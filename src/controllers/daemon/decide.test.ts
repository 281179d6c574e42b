import type { DaemonSet } from 'kubernetes-types/apps/v1.js';
import type { Node, Pod, Taint } from 'kubernetes-types/core/v1.js';
import { describe, expect, it } from 'vitest';
import { daemonStatus, decideDaemonSet, decideManage, decideRollingUpdate, type DaemonState } from './decide.js';
import { daemonPodTemplate, daemonTolerations, nodeShouldRunDaemonPod, pinToNode, targetNodeName } from './util.js';

const NOW = Date.parse('2026-01-01T00:10:00Z');
const HASH = 'newhash';

function mkSet(over: { spec?: Partial<NonNullable<DaemonSet['spec']>>; generation?: string } = {}): DaemonSet {
  return {
    metadata: {
      name: 'agent',
      namespace: 'default',
      uid: 'ds-uid',
      generation: 1,
      annotations: { 'deprecated.daemonset.template.generation': over.generation ?? '2' },
    },
    spec: {
      selector: { matchLabels: { app: 'agent' } },
      template: { metadata: { labels: { app: 'agent' } }, spec: { containers: [{ name: 'c', image: 'img' }] } },
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } },
      ...over.spec,
    },
  };
}

function mkNode(name: string, o: { labels?: Record<string, string>; taints?: Taint[]; unschedulable?: boolean } = {}) {
  return {
    metadata: { name, labels: { 'kubernetes.io/hostname': name, ...o.labels } },
    spec: { taints: o.taints, unschedulable: o.unschedulable },
  } as Node;
}

let seq = 0;
function mkPod(
  node: string,
  o: {
    hash?: string;
    ready?: boolean;
    phase?: string;
    scheduled?: boolean;
    deleting?: boolean;
    created?: string;
    name?: string;
  } = {},
): Pod {
  seq++;
  const name = o.name ?? `agent-${node}-${seq}`;
  return {
    metadata: {
      name,
      uid: `uid-${name}`,
      namespace: 'default',
      labels: { app: 'agent', 'controller-revision-hash': o.hash ?? HASH },
      creationTimestamp: o.created ?? `2026-01-01T00:00:${String(seq % 60).padStart(2, '0')}Z`,
      ...(o.deleting ? { deletionTimestamp: '2026-01-01T00:09:00Z' } : {}),
    },
    spec: {
      containers: [],
      ...(o.scheduled === false ? {} : { nodeName: node }),
      affinity: pinToNode(undefined, node),
    },
    status: {
      phase: o.phase ?? 'Running',
      conditions: [
        { type: 'Ready', status: o.ready === false ? 'False' : 'True', lastTransitionTime: '2026-01-01T00:01:00Z' },
      ],
    },
  };
}

const state = (ds: DaemonSet, nodes: Node[], pods: Pod[], extra: Partial<DaemonState> = {}): DaemonState => ({
  ds,
  nodes,
  pods,
  hash: HASH,
  now: NOW,
  ...extra,
});
const names = (ps: readonly Pod[]): string[] => ps.map((p) => p.metadata?.name ?? '');

describe('the pods a daemon set makes', () => {
  it('get the daemon tolerations (network-unavailable only with hostNetwork), the labels and no duplicates', () => {
    const keys = (spec: Parameters<typeof daemonTolerations>[0]) =>
      daemonTolerations(spec).map((t) => `${t.key}:${t.effect}`);
    expect(keys({ containers: [] })).toEqual([
      'node.kubernetes.io/not-ready:NoExecute',
      'node.kubernetes.io/unreachable:NoExecute',
      'node.kubernetes.io/disk-pressure:NoSchedule',
      'node.kubernetes.io/memory-pressure:NoSchedule',
      'node.kubernetes.io/pid-pressure:NoSchedule',
      'node.kubernetes.io/unschedulable:NoSchedule',
    ]);
    expect(keys({ containers: [], hostNetwork: true })).toContain('node.kubernetes.io/network-unavailable:NoSchedule');
    const own = { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' };
    expect(daemonTolerations({ containers: [], tolerations: [own] }).filter((t) => t.key === own.key)).toHaveLength(1);
    const t = daemonPodTemplate(mkSet(), HASH);
    expect(t.metadata?.labels).toEqual({
      app: 'agent',
      'pod-template-generation': '2',
      'controller-revision-hash': HASH,
    });
  });

  it('are pinned by a matchFields metadata.name term replacing the required terms, preferred ones kept', () => {
    const affinity = pinToNode(
      {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchExpressions: [{ key: 'disk', operator: 'In', values: ['ssd'] }] }],
          },
          preferredDuringSchedulingIgnoredDuringExecution: [
            { weight: 1, preference: { matchExpressions: [{ key: 'z', operator: 'Exists' }] } },
          ],
        },
      },
      'n1',
    );
    expect(affinity.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution).toEqual({
      nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] }],
    });
    expect(affinity.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution).toHaveLength(1);
    expect(targetNodeName({ spec: { containers: [], affinity } })).toBe('n1');
    expect(targetNodeName({ spec: { containers: [] } })).toBeUndefined();
  });
});

describe('nodeShouldRunDaemonPod (kube’s cases)', () => {
  const taint = (key: string, effect: string, value?: string): Taint => ({ key, effect, value });
  const cases: Array<[string, DaemonSet, Node, boolean, boolean]> = [
    ['a plain node', mkSet(), mkNode('n'), true, true],
    [
      'a cordoned node (the unschedulable taint is tolerated)',
      mkSet(),
      mkNode('n', { unschedulable: true, taints: [taint('node.kubernetes.io/unschedulable', 'NoSchedule')] }),
      true,
      true,
    ],
    [
      'a not-ready node (NoExecute tolerated)',
      mkSet(),
      mkNode('n', { taints: [taint('node.kubernetes.io/not-ready', 'NoExecute')] }),
      true,
      true,
    ],
    [
      'a node under memory pressure',
      mkSet(),
      mkNode('n', { taints: [taint('node.kubernetes.io/memory-pressure', 'NoSchedule')] }),
      true,
      true,
    ],
    [
      'an untolerated NoSchedule taint: no new pod, an existing one stays',
      mkSet(),
      mkNode('n', { taints: [taint('dedicated', 'NoSchedule', 'db')] }),
      false,
      true,
    ],
    [
      'an untolerated NoExecute taint: no pod at all',
      mkSet(),
      mkNode('n', { taints: [taint('dedicated', 'NoExecute', 'db')] }),
      false,
      false,
    ],
    [
      'a PreferNoSchedule taint is no obstacle',
      mkSet(),
      mkNode('n', { taints: [taint('dedicated', 'PreferNoSchedule')] }),
      true,
      true,
    ],
    [
      'a tolerated NoExecute taint',
      mkSet({
        spec: {
          template: {
            spec: {
              containers: [],
              tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'db', effect: 'NoExecute' }],
            },
          },
        },
      }),
      mkNode('n', { taints: [taint('dedicated', 'NoExecute', 'db')] }),
      true,
      true,
    ],
    [
      'a nodeSelector that matches',
      mkSet({ spec: { template: { spec: { containers: [], nodeSelector: { disk: 'ssd' } } } } }),
      mkNode('n', { labels: { disk: 'ssd' } }),
      true,
      true,
    ],
    [
      'a nodeSelector that does not',
      mkSet({ spec: { template: { spec: { containers: [], nodeSelector: { disk: 'ssd' } } } } }),
      mkNode('n'),
      false,
      false,
    ],
    [
      'required node affinity that does not match',
      mkSet({
        spec: {
          template: {
            spec: {
              containers: [],
              affinity: {
                nodeAffinity: {
                  requiredDuringSchedulingIgnoredDuringExecution: {
                    nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] }],
                  },
                },
              },
            },
          },
        },
      }),
      mkNode('n', { labels: { zone: 'b' } }),
      false,
      false,
    ],
    [
      'a template naming another node',
      mkSet({ spec: { template: { spec: { containers: [], nodeName: 'other' } } } }),
      mkNode('n'),
      false,
      false,
    ],
  ];
  it.each(cases)('%s', (_, ds, node, shouldRun, shouldContinueRunning) => {
    expect(nodeShouldRunDaemonPod(ds, node)).toEqual({ shouldRun, shouldContinueRunning });
  });
});

describe('manage', () => {
  it('creates a pod on each eligible node lacking one: a node added gets one', () => {
    const d = decideManage(state(mkSet(), [mkNode('a'), mkNode('b')], [mkPod('a')]));
    expect(d.create).toEqual(['b']);
    expect(d.delete).toEqual([]);
  });

  it('deletes pods where they may no longer run (NoExecute taint, a label removed)', () => {
    const ds = mkSet({ spec: { template: { spec: { containers: [], nodeSelector: { role: 'storage' } } } } });
    const tainted = mkNode('a', { labels: { role: 'storage' }, taints: [{ key: 'x', effect: 'NoExecute' }] });
    const relabelled = mkNode('b');
    const pods = [mkPod('a', { name: 'pa' }), mkPod('b', { name: 'pb' })];
    expect(names(decideManage(state(ds, [tainted, relabelled], pods)).delete)).toEqual(['pa', 'pb']);
  });

  it('keeps a pod on a node newly tainted NoSchedule, and on a cordoned one', () => {
    const nodes = [
      mkNode('a', { taints: [{ key: 'x', effect: 'NoSchedule' }] }),
      mkNode('b', { unschedulable: true, taints: [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' }] }),
    ];
    const d = decideManage(state(mkSet(), nodes, [mkPod('a'), mkPod('b')]));
    expect(d).toEqual({ create: [], delete: [], failed: [] });
  });

  it('a node removed: its unscheduled pod is deleted, a scheduled one is left to pod GC', () => {
    const pods = [mkPod('gone', { scheduled: false, name: 'waiting' }), mkPod('gone2', { name: 'bound' })];
    expect(names(decideManage(state(mkSet(), [], pods)).delete)).toEqual(['waiting']);
  });

  it('keeps the oldest of several pods on a node (no surge), scheduled first', () => {
    const pods = [
      mkPod('a', { name: 'young', created: '2026-01-01T00:05:00Z' }),
      mkPod('a', { name: 'old', created: '2026-01-01T00:01:00Z' }),
      mkPod('a', { name: 'unscheduled', created: '2026-01-01T00:00:00Z', scheduled: false }),
    ];
    expect(names(decideManage(state(mkSet(), [mkNode('a')], pods)).delete)).toEqual(['young', 'unscheduled']);
  });

  it('kills a failed pod (then backs off on that node), deletes a succeeded one, ignores terminating ones', () => {
    const failed = mkPod('a', { name: 'failed', phase: 'Failed' });
    const d = decideManage(
      state(mkSet(), [mkNode('a'), mkNode('b')], [failed, mkPod('b', { phase: 'Succeeded', name: 'done' })]),
    );
    expect(names(d.delete)).toEqual(['failed', 'done']);
    expect(names(d.failed)).toEqual(['failed']);
    const backingOff = decideManage(state(mkSet(), [mkNode('a')], [failed], { failedBackoffMs: () => 2000 }));
    expect(backingOff).toEqual({ create: [], delete: [], failed: [], requeueAfterMs: 2000 });
    const terminating = decideManage(state(mkSet(), [mkNode('a')], [mkPod('a', { deleting: true })]));
    expect(terminating).toEqual({ create: [], delete: [], failed: [] });
  });

  it('under surge keeps an old ready pod beside a new unavailable one, and drops the old once the new is available', () => {
    const ds = mkSet({
      spec: { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } } },
    });
    const old = mkPod('a', { name: 'old', hash: 'oldhash', created: '2026-01-01T00:00:01Z' });
    const fresh = mkPod('a', { name: 'new', ready: false, created: '2026-01-01T00:00:02Z' });
    expect(decideManage(state(ds, [mkNode('a')], [old, fresh])).delete).toEqual([]);
    const ready = mkPod('a', { name: 'new', created: '2026-01-01T00:00:02Z' });
    expect(names(decideManage(state(ds, [mkNode('a')], [old, ready])).delete)).toEqual(['old']);
  });
});

describe('rollingUpdate', () => {
  const nodes = [mkNode('a'), mkNode('b'), mkNode('c')];
  it('maxUnavailable 1: one old pod at a time, none while a new one is not available', () => {
    const old = ['a', 'b', 'c'].map((n) => mkPod(n, { hash: 'old', name: `old-${n}` }));
    expect(names(decideRollingUpdate(state(mkSet(), nodes, old)).delete)).toEqual(['old-a']);
    const midway = [mkPod('a', { ready: false }), ...old.slice(1)];
    expect(decideRollingUpdate(state(mkSet(), nodes, midway)).delete).toEqual([]);
    const done = [mkPod('a'), ...old.slice(1)];
    expect(names(decideRollingUpdate(state(mkSet(), nodes, done)).delete)).toEqual(['old-b']);
  });

  it('replaces unavailable old pods whatever the budget (they do not count against it)', () => {
    const pods = [
      mkPod('a', { hash: 'old', ready: false, name: 'sick-a' }),
      mkPod('b', { hash: 'old', ready: false, name: 'sick-b' }),
      mkPod('c', { hash: 'old', name: 'ok-c' }),
    ];
    expect(names(decideRollingUpdate(state(mkSet(), nodes, pods)).delete)).toEqual(['sick-a', 'sick-b', 'ok-c']);
  });

  it('a percentage maxUnavailable is rounded up against the desired nodes', () => {
    const ds = mkSet({
      spec: { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '50%', maxSurge: 0 } } },
    });
    const old = ['a', 'b', 'c'].map((n) => mkPod(n, { hash: 'old', name: `old-${n}` }));
    expect(names(decideRollingUpdate(state(ds, nodes, old)).delete)).toEqual(['old-a', 'old-b']);
  });

  it('a pod of the current template generation counts as updated', () => {
    const p = mkPod('a', { hash: 'other' });
    p.metadata!.labels!['pod-template-generation'] = '2';
    expect(decideRollingUpdate(state(mkSet(), [mkNode('a')], [p])).delete).toEqual([]);
  });

  it('maxSurge 1: a new pod beside the old one on one node at a time, at once where the old is unavailable', () => {
    const ds = mkSet({
      spec: { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } } },
    });
    const old = ['a', 'b', 'c'].map((n) => mkPod(n, { hash: 'old', name: `old-${n}` }));
    expect(decideRollingUpdate(state(ds, nodes, old))).toEqual({ create: ['a'], delete: [], failed: [] });
    const surging = [...old, mkPod('a', { ready: false })];
    expect(decideRollingUpdate(state(ds, nodes, surging))).toEqual({ create: [], delete: [], failed: [] });
    const surged = [...old, mkPod('a')];
    const d = decideRollingUpdate(state(ds, nodes, surged));
    expect(names(d.delete)).toEqual(['old-a']);
    expect(d.create).toEqual(['b']);
    const sick = [mkPod('a', { hash: 'old', ready: false }), ...old.slice(1), mkPod('b', { ready: false })];
    expect(decideRollingUpdate(state(ds, nodes, sick)).create).toEqual(['a']);
  });

  it('OnDelete never replaces a pod; manage comes first', () => {
    const ds = mkSet({ spec: { updateStrategy: { type: 'OnDelete' } } });
    const old = ['a', 'b', 'c'].map((n) => mkPod(n, { hash: 'old' }));
    expect(decideDaemonSet(state(ds, nodes, old))).toEqual({ create: [], delete: [], failed: [] });
    expect(decideDaemonSet(state(mkSet(), nodes, old.slice(0, 2))).create).toEqual(['c']);
  });
});

describe('status', () => {
  it('counts desired, current, ready, available, updated and misscheduled pods from the oldest pod per node', () => {
    const ds = mkSet({
      spec: { minReadySeconds: 600, template: { spec: { containers: [], nodeSelector: { run: 'yes' } } } },
    });
    const nodes = [
      mkNode('a', { labels: { run: 'yes' } }),
      mkNode('b', { labels: { run: 'yes' } }),
      mkNode('c', { labels: { run: 'yes' } }),
      mkNode('d'),
    ];
    const pods = [mkPod('a'), mkPod('b', { hash: 'old', ready: false }), mkPod('d')];
    expect(daemonStatus(state(ds, nodes, pods))).toEqual({
      desiredNumberScheduled: 3,
      currentNumberScheduled: 2,
      numberMisscheduled: 1,
      numberReady: 1,
      numberAvailable: 0,
      updatedNumberScheduled: 1,
      numberUnavailable: 3,
    });
  });
});
