import type { ReplicaSet } from 'kubernetes-types/apps/v1.js';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { describe, expect, it } from 'vitest';
import { podsToDelete, slowStartBatches } from '../../kube/workloads.js';
import { planReplicaSet, podFromTemplate } from './decide.js';

const NOW = Date.parse('2026-01-01T01:00:00Z');
const rs = (replicas: number, o: { deleting?: boolean; minReady?: number } = {}): ReplicaSet => ({
  metadata: {
    name: 'web-abc',
    namespace: 'ns',
    uid: 'rs-uid',
    generation: 2,
    ...(o.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
  },
  spec: {
    replicas,
    minReadySeconds: o.minReady ?? 0,
    selector: { matchLabels: { app: 'web' } },
    template: {
      metadata: { labels: { app: 'web' }, annotations: { a: 'b' } },
      spec: { containers: [{ name: 'c', image: 'i' }] },
    },
  },
});

interface PodOpts {
  owner?: string | null;
  labels?: Record<string, string>;
  node?: string;
  phase?: string;
  ready?: boolean;
  readySince?: string;
  deleting?: boolean;
  created?: string;
  cost?: number;
  restarts?: number;
}
function pod(name: string, o: PodOpts = {}): Pod {
  const owner = o.owner === undefined ? 'rs-uid' : o.owner;
  return {
    metadata: {
      name,
      namespace: 'ns',
      uid: `uid-${name}`,
      labels: o.labels ?? { app: 'web' },
      creationTimestamp: o.created ?? '2026-01-01T00:00:00Z',
      ...(owner
        ? { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'x', uid: owner, controller: true }] }
        : {}),
      ...(o.deleting ? { deletionTimestamp: '2026-01-01T00:59:00Z' } : {}),
      ...(o.cost !== undefined
        ? { annotations: { 'controller.kubernetes.io/pod-deletion-cost': String(o.cost) } }
        : {}),
    },
    spec: { containers: [], ...(o.node !== undefined ? { nodeName: o.node } : { nodeName: 'n1' }) },
    status: {
      phase: o.phase ?? 'Running',
      conditions: [
        {
          type: 'Ready',
          status: o.ready === false ? 'False' : 'True',
          lastTransitionTime: o.readySince ?? '2026-01-01T00:00:00Z',
        },
      ],
      ...(o.restarts
        ? { containerStatuses: [{ name: 'c', image: 'i', imageID: '', ready: true, restartCount: o.restarts }] }
        : {}),
    },
  };
}
const names = (ps: readonly Pod[]): string[] => ps.map((p) => p.metadata!.name!);

describe('planReplicaSet', () => {
  it.each([
    { name: 'no pods: create all', rs: rs(3), pods: [], create: 3, del: [], adopt: [], release: [] },
    { name: 'enough pods: nothing', rs: rs(2), pods: [pod('a'), pod('b')], create: 0, del: [], adopt: [], release: [] },
    {
      name: 'finished and terminating pods do not count',
      rs: rs(2),
      pods: [pod('a', { phase: 'Failed' }), pod('b', { deleting: true }), pod('c')],
      create: 1,
      del: [],
      adopt: [],
      release: [],
    },
    {
      name: 'orphan matching the selector is adopted and counted',
      rs: rs(2),
      pods: [pod('a'), pod('o', { owner: null })],
      create: 0,
      del: [],
      adopt: ['o'],
      release: [],
    },
    {
      name: "another controller's pod is left alone",
      rs: rs(1),
      pods: [pod('x', { owner: 'other' })],
      create: 1,
      del: [],
      adopt: [],
      release: [],
    },
    {
      name: 'owned pod whose labels no longer match is released',
      rs: rs(1),
      pods: [pod('a'), pod('b', { labels: { app: 'other' } })],
      create: 0,
      del: [],
      adopt: [],
      release: ['b'],
    },
    {
      name: 'too many: the pending one goes first',
      rs: rs(1),
      pods: [pod('a'), pod('p', { phase: 'Pending', ready: false })],
      create: 0,
      del: ['p'],
      adopt: [],
      release: [],
    },
    {
      name: 'ReplicaSet being deleted: no action, no adoption',
      rs: rs(3, { deleting: true }),
      pods: [pod('o', { owner: null })],
      create: 0,
      del: [],
      adopt: [],
      release: [],
    },
  ])('$name', ({ rs: r, pods, create, del, adopt, release }) => {
    const p = planReplicaSet(r, pods, NOW);
    expect({ create: p.create, del: names(p.delete), adopt: names(p.adopt), release: names(p.release) }).toEqual({
      create,
      del,
      adopt,
      release,
    });
  });

  it('status counts replicas, fully labeled, ready and available (minReadySeconds) pods', () => {
    const p = planReplicaSet(
      rs(3, { minReady: 60 }),
      [
        pod('a'),
        pod('b', { readySince: '2026-01-01T00:59:30Z' }),
        pod('c', { ready: false, labels: { app: 'web', x: 'y' } }),
      ],
      NOW,
    );
    expect(p.status).toEqual({
      replicas: 3,
      fullyLabeledReplicas: 3,
      readyReplicas: 2,
      availableReplicas: 1,
      observedGeneration: 2,
    });
    expect(p.requeueAfterMs).toBe(30_000);
  });

  it('pods from the template carry its labels and annotations and a controller reference', () => {
    expect(podFromTemplate(rs(1))).toMatchObject({
      metadata: {
        generateName: 'web-abc-',
        namespace: 'ns',
        labels: { app: 'web' },
        annotations: { a: 'b' },
        ownerReferences: [
          {
            apiVersion: 'apps/v1',
            kind: 'ReplicaSet',
            name: 'web-abc',
            uid: 'rs-uid',
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      spec: { containers: [{ name: 'c', image: 'i' }] },
    });
  });
});

describe("deletion order (kube's ActivePodsWithRanks)", () => {
  it.each([
    { name: 'unassigned before assigned', pods: [pod('on', {}), pod('off', { node: '' })], want: 'off' },
    { name: 'pending before running', pods: [pod('run'), pod('pend', { phase: 'Pending' })], want: 'pend' },
    { name: 'not ready before ready', pods: [pod('r'), pod('nr', { ready: false })], want: 'nr' },
    { name: 'lower deletion cost first', pods: [pod('hi', { cost: 10 }), pod('lo', { cost: -5 })], want: 'lo' },
    {
      name: 'more pods on the same node first',
      pods: [pod('alone', { node: 'n2' }), pod('crowd1', { node: 'n1' }), pod('crowd2', { node: 'n1' })],
      want: 'crowd1',
    },
    {
      name: 'ready for less time first',
      pods: [pod('old', { readySince: '2026-01-01T00:00:00Z' }), pod('new', { readySince: '2026-01-01T00:59:50Z' })],
      want: 'new',
    },
    { name: 'more restarts first', pods: [pod('calm'), pod('flappy', { restarts: 5 })], want: 'flappy' },
  ])('$name', ({ pods, want }) => {
    expect(names(podsToDelete(pods, 1, NOW))).toEqual([want]);
  });
});

it('ranks by the pods of sibling ReplicaSets on the same node too', () => {
  const mine = [pod('on-n1', { node: 'n1' }), pod('on-n2', { node: 'n2' })];
  const sibling = [pod('s1', { node: 'n2', owner: 'sibling' }), pod('s2', { node: 'n2', owner: 'sibling' })];
  expect(names(planReplicaSet(rs(1), mine, NOW, sibling).delete)).toEqual(['on-n2']);
  expect(names(planReplicaSet(rs(1), mine, NOW).delete)).toHaveLength(1);
});

describe('slow start', () => {
  it.each([
    { count: 0, want: [] },
    { count: 1, want: [1] },
    { count: 5, want: [1, 2, 2] },
    { count: 7, want: [1, 2, 4] },
    { count: 20, want: [1, 2, 4, 8, 5] },
  ])('$count pods → batches $want', ({ count, want }) => expect(slowStartBatches(count)).toEqual(want));
});
