import { describe, expect, it } from 'vitest';
import type { Node, Pod, Taint, Toleration } from 'kubernetes-types/core/v1.js';
import type { Lease } from 'kubernetes-types/coordination/v1.js';
import {
  noScheduleTaints,
  evictionDecision,
  forceDeleteOnFencedNode,
  observeHealth,
  podNotReadyConditions,
  staleAt,
  staleConditions,
} from './decide.js';
import { tolerates } from '../../kube/node.js';

const T0 = Date.parse('2026-11-24T10:00:00Z');
const node = (ready?: string, taints?: Taint[]): Node => ({
  metadata: { name: 'n1' },
  spec: taints ? { taints } : {},
  status: {
    conditions: ready
      ? [{ type: 'Ready', status: ready, lastHeartbeatTime: '2026-11-24T09:59:59Z', reason: 'KubeletReady' }]
      : [],
  },
});
const lease = (renew: string): Lease => ({ metadata: { name: 'n1' }, spec: { renewTime: renew } });
const pod = (tolerations: Toleration[], deleting = false): Pod => ({
  metadata: { name: 'p', namespace: 'd', ...(deleting ? { deletionTimestamp: '2026-11-24T10:00:00Z' } : {}) },
  spec: { containers: [], tolerations },
});
const noExec = (key: string, timeAdded?: string): Taint => ({
  key,
  effect: 'NoExecute',
  ...(timeAdded ? { timeAdded } : {}),
});

describe('node health', () => {
  it('times a node from when the controller saw its heartbeat change, not from the node clock', () => {
    const h0 = observeHealth(undefined, node('True'), lease('2020-01-01T00:00:00.000000Z'), T0);
    expect(h0.probeMs).toBe(T0);
    expect(observeHealth(h0, node('True'), lease('2020-01-01T00:00:00.000000Z'), T0 + 5_000)).toBe(h0);
    expect(observeHealth(h0, node('True'), lease('2020-01-01T00:00:10.000000Z'), T0 + 5_000).probeMs).toBe(T0 + 5_000);
  });

  it('turns Ready Unknown only once the grace period passed, with kube reasons, and adds the conditions never posted', () => {
    const h = { probeMs: T0 };
    expect(staleConditions(node('True'), h, T0 + 39_999, 40_000)).toBeNull();
    expect(staleAt(h, T0, 40_000)).toBe(T0 + 40_000);
    const c = staleConditions(node('True'), h, T0 + 40_000, 40_000)!;
    expect(c.find((x) => x.type === 'Ready')).toMatchObject({
      status: 'Unknown',
      reason: 'NodeStatusUnknown',
      message: 'Kubelet stopped posting node status.',
      lastHeartbeatTime: '2026-11-24T09:59:59Z',
    });
    expect(c.find((x) => x.type === 'DiskPressure')).toMatchObject({
      status: 'Unknown',
      reason: 'NodeStatusNeverUpdated',
    });
    expect(staleConditions({ ...node(), status: { conditions: c } }, h, T0 + 60_000, 40_000)).toBeNull();
  });
});

describe('NoSchedule lifecycle taints (not rate-limited)', () => {
  it.each([
    { name: 'Ready True: none', ready: 'True', have: [], want: null },
    {
      name: 'Ready Unknown: unreachable',
      ready: 'Unknown',
      have: [],
      want: ['node.kubernetes.io/unreachable:NoSchedule'],
    },
    { name: 'Ready False: not-ready', ready: 'False', have: [], want: ['node.kubernetes.io/not-ready:NoSchedule'] },
    {
      name: 'Unknown → False swaps the NoSchedule taint, leaving the NoExecute one to the zone pass and others alone',
      ready: 'False',
      have: [
        { key: 'x', effect: 'NoSchedule' },
        { key: 'node.kubernetes.io/unreachable', effect: 'NoSchedule' },
        noExec('node.kubernetes.io/unreachable', 'z'),
      ],
      want: ['x:NoSchedule', 'node.kubernetes.io/unreachable:NoExecute', 'node.kubernetes.io/not-ready:NoSchedule'],
    },
    {
      name: "back to True: removed (NoExecute too is the zone pass's)",
      ready: 'True',
      have: [{ key: 'node.kubernetes.io/unreachable', effect: 'NoSchedule' }, noExec('node.kubernetes.io/unreachable')],
      want: ['node.kubernetes.io/unreachable:NoExecute'],
    },
    {
      name: 'already right: unchanged',
      ready: 'Unknown',
      have: [{ key: 'node.kubernetes.io/unreachable', effect: 'NoSchedule' }],
      want: null,
    },
    { name: 'no Ready condition yet: left alone', ready: undefined, have: [], want: null },
    {
      name: 'no Ready condition yet: its Ready taint kept',
      ready: undefined,
      have: [{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }],
      want: null,
    },
  ] as { name: string; ready?: string; have: Taint[]; want: string[] | null }[])('$name', ({ ready, have, want }) => {
    const got = noScheduleTaints(node(ready, have));
    expect(got && got.map((t) => `${t.key}:${t.effect}`)).toEqual(want);
  });
});

describe('NoSchedule taints of the other conditions and of spec.unschedulable', () => {
  const withStatus = (
    conditions: { type: string; status: string }[],
    o: { unschedulable?: boolean; taints?: Taint[] } = {},
  ): Node => ({
    metadata: { name: 'n1' },
    spec: { unschedulable: o.unschedulable, taints: o.taints },
    status: { conditions },
  });
  it.each([
    {
      name: 'cordoned: unschedulable',
      node: withStatus([{ type: 'Ready', status: 'True' }], { unschedulable: true }),
      want: ['node.kubernetes.io/unschedulable:NoSchedule'],
    },
    {
      name: 'uncordoned: unschedulable goes, a user NoSchedule taint stays',
      node: withStatus([{ type: 'Ready', status: 'True' }], {
        taints: [
          { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' },
          { key: 'mine', effect: 'NoSchedule' },
        ],
      }),
      want: ['mine:NoSchedule'],
    },
    {
      name: 'pressure conditions True: theirs',
      node: withStatus([
        { type: 'Ready', status: 'True' },
        { type: 'MemoryPressure', status: 'True' },
        { type: 'DiskPressure', status: 'True' },
        { type: 'PIDPressure', status: 'True' },
        { type: 'NetworkUnavailable', status: 'True' },
      ]),
      want: [
        'node.kubernetes.io/memory-pressure:NoSchedule',
        'node.kubernetes.io/disk-pressure:NoSchedule',
        'node.kubernetes.io/pid-pressure:NoSchedule',
        'node.kubernetes.io/network-unavailable:NoSchedule',
      ],
    },
    {
      name: 'pressure gone: its taint goes',
      node: withStatus(
        [
          { type: 'Ready', status: 'True' },
          { type: 'DiskPressure', status: 'False' },
        ],
        { taints: [{ key: 'node.kubernetes.io/disk-pressure', effect: 'NoSchedule' }] },
      ),
      want: [],
    },
    {
      name: "a NoExecute taint of the same key is not the pass's",
      node: withStatus([{ type: 'Ready', status: 'True' }], {
        taints: [{ key: 'node.kubernetes.io/memory-pressure', effect: 'NoExecute' }],
      }),
      want: null,
    },
  ])('$name', ({ node: n, want }) => {
    const got = noScheduleTaints(n);
    expect(got && got.map((t) => `${t.key}:${t.effect}`)).toEqual(want);
  });
});

describe('taint eviction', () => {
  const unreachable = noExec('node.kubernetes.io/unreachable', '2026-11-24T10:00:00Z');
  const defaults: Toleration[] = [
    { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
    { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
  ];
  it.each([
    { name: 'no NoExecute taint: keep', tol: [], taints: [{ key: 'a', effect: 'NoSchedule' }], want: { kind: 'keep' } },
    { name: 'not tolerated: now', tol: [], taints: [unreachable], want: { kind: 'evictNow' } },
    {
      name: 'default 300 s: at timeAdded + 300 s',
      tol: defaults,
      taints: [unreachable],
      want: { kind: 'evictAt', atMs: T0 + 300_000 },
    },
    { name: 'tolerated forever: keep', tol: [{ operator: 'Exists' }], taints: [unreachable], want: { kind: 'keep' } },
    {
      name: 'zero seconds: now',
      tol: [{ key: 'node.kubernetes.io/unreachable', operator: 'Exists', tolerationSeconds: 0 }],
      taints: [unreachable],
      want: { kind: 'evictNow' },
    },
    {
      name: 'one taint tolerated, another not: now',
      tol: defaults,
      taints: [unreachable, noExec('other')],
      want: { kind: 'evictNow' },
    },
  ] as { name: string; tol: Toleration[]; taints: Taint[]; want: unknown }[])('$name', ({ tol, taints, want }) => {
    expect(evictionDecision(pod(tol), taints, T0 + 1_000)).toEqual(want);
  });

  it('matches tolerations as v1 ToleratesTaint does', () => {
    const t: Taint = { key: 'k', value: 'v', effect: 'NoExecute' };
    expect(tolerates({ key: 'k', operator: 'Equal', value: 'v' }, t)).toBe(true);
    expect(tolerates({ key: 'k', value: 'w' }, t)).toBe(false);
    expect(tolerates({ key: 'k', operator: 'Exists', effect: 'NoSchedule' }, t)).toBe(false);
    expect(tolerates({ operator: 'Exists' }, t)).toBe(true);
    expect(tolerates({ operator: 'Equal' }, t)).toBe(false);
  });
});

describe('out-of-service', () => {
  const oos: Taint = { key: 'node.kubernetes.io/out-of-service', value: 'nodeshutdown', effect: 'NoExecute' };
  it.each([
    {
      name: 'terminating pod, fenced NotReady node: force delete',
      deleting: true,
      ready: 'Unknown',
      taints: [oos],
      want: true,
    },
    { name: 'no taint: wait for the kubelet', deleting: true, ready: 'Unknown', taints: [], want: false },
    { name: 'node Ready: its kubelet finishes', deleting: true, ready: 'True', taints: [oos], want: false },
    { name: 'pod not terminating: eviction first', deleting: false, ready: 'Unknown', taints: [oos], want: false },
  ])('$name', ({ deleting, ready, taints, want }) => {
    expect(forceDeleteOnFencedNode(pod([], deleting), node(ready, taints))).toBe(want);
  });
});

describe('pods of a node that is not ready', () => {
  const withReady = (status?: string): Pod => ({
    metadata: { name: 'p' },
    spec: { containers: [] },
    status: {
      conditions: status
        ? [
            { type: 'PodScheduled', status: 'True' },
            { type: 'Ready', status },
          ]
        : [],
    },
  });
  it.each([
    { name: 'node Unknown, pod Ready True → False', node: 'Unknown', pod: 'True', want: 'False' },
    { name: 'node False, pod Ready True → False', node: 'False', pod: 'True', want: 'False' },
    { name: 'already False → nothing', node: 'Unknown', pod: 'False', want: null },
    { name: 'node Ready → nothing', node: 'True', pod: 'True', want: null },
    { name: 'pod without a Ready condition → nothing', node: 'Unknown', pod: undefined, want: null },
  ])('$name', ({ node: n, pod: p, want }) => {
    const got = podNotReadyConditions(withReady(p), node(n), T0);
    expect(got && got.find((c) => c.type === 'Ready')?.status).toBe(want);
    if (got)
      expect(got).toEqual([
        { type: 'PodScheduled', status: 'True' },
        { type: 'Ready', status: 'False', lastTransitionTime: '2026-11-24T10:00:00Z' },
      ]);
  });
});
