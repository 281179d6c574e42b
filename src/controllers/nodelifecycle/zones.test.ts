import { describe, expect, it } from 'vitest';
import type { Node, Taint } from 'kubernetes-types/core/v1.js';
import {
  DEFAULT_EVICTION_LIMITS,
  computeZoneState,
  noExecuteStep,
  planDisruption,
  swappedNoExecuteTaints,
  withoutNoExecuteLifecycleTaints,
  zoneKey,
  zoneReadiness,
  type ZoneState,
} from './zones.js';

const T0 = Date.parse('2026-11-24T10:00:00Z');
const UNREACHABLE = 'node.kubernetes.io/unreachable';
const NOT_READY = 'node.kubernetes.io/not-ready';
const zoneLabels = (region: string, zone: string) => ({
  'topology.kubernetes.io/region': region,
  'topology.kubernetes.io/zone': zone,
});
const node = (
  name: string,
  ready: string | undefined,
  o: { labels?: Record<string, string>; taints?: Taint[] } = {},
): Node => ({
  metadata: { name, labels: o.labels },
  spec: { taints: o.taints },
  status: { conditions: ready ? [{ type: 'Ready', status: ready }] : [] },
});
const zoned =
  (zone: string) =>
  (name: string, ready: string | undefined): Node =>
    node(name, ready, { labels: zoneLabels('region1', zone) });
const Z1 = 'region1:\x00:zone1';
const Z2 = 'region1:\x00:zone2';
const states = (m: ReadonlyMap<string, ZoneState>) => Object.fromEntries(m);
const rates = (m: ReadonlyMap<string, number>) => Object.fromEntries(m);

describe('zoneKey (GetZoneKey)', () => {
  it.each([
    { name: 'no labels: the one zone ""', labels: undefined, want: '' },
    { name: 'region and zone', labels: zoneLabels('r', 'z'), want: 'r:\x00:z' },
    { name: 'zone only', labels: { 'topology.kubernetes.io/zone': 'z' }, want: ':\x00:z' },
    {
      name: 'the beta failure-domain labels first',
      labels: { ...zoneLabels('r', 'z'), 'failure-domain.beta.kubernetes.io/zone': 'old' },
      want: 'r:\x00:old',
    },
  ])('$name', ({ labels, want }) => expect(zoneKey(node('n', 'True', { labels }))).toBe(want));
});

describe('computeZoneState', () => {
  it.each([
    { name: 'all Ready: Normal', ready: ['True', 'True'], want: 'Normal' },
    {
      name: 'no Ready node: FullDisruption (the last healthy node failed)',
      ready: ['Unknown', 'False'],
      want: 'FullDisruption',
    },
    { name: 'nodes that never reported count as not Ready', ready: [undefined, undefined], want: 'FullDisruption' },
    { name: '2 of 3 down: Normal (more than 2 needed)', ready: ['Unknown', 'Unknown', 'True'], want: 'Normal' },
    { name: '2 of 5 down: Normal', ready: ['Unknown', 'Unknown', 'True', 'True', 'True'], want: 'Normal' },
    {
      name: '3 of 5 down (0.6 ≥ 0.55): PartialDisruption',
      ready: ['Unknown', 'Unknown', 'Unknown', 'True', 'True'],
      want: 'PartialDisruption',
    },
    {
      name: '3 of 6 down (0.5): Normal',
      ready: ['Unknown', 'Unknown', 'Unknown', 'True', 'True', 'True'],
      want: 'Normal',
    },
    {
      name: '3 of 4 never reported: PartialDisruption',
      ready: [undefined, undefined, undefined, 'True'],
      want: 'PartialDisruption',
    },
  ])('$name', ({ ready, want }) => expect(computeZoneState(ready, 0.55).state).toBe(want));
});

describe('zoneReadiness', () => {
  it('groups by zone and leaves out nodes labelled node.kubernetes.io/exclude-disruption', () => {
    const r = zoneReadiness([
      zoned('zone1')('a', 'True'),
      zoned('zone2')('b', 'False'),
      node('c', 'Unknown', {
        labels: { ...zoneLabels('region1', 'zone1'), 'node.kubernetes.io/exclude-disruption': '' },
      }),
    ]);
    expect(Object.fromEntries(r)).toEqual({ [Z1]: ['True'], [Z2]: ['False'] });
  });
});

/** Runs planDisruption over passes, each a list of nodes; the plan of every pass. */
function passes(...rounds: Node[][]) {
  let prev: ReadonlyMap<string, ZoneState> = new Map();
  return rounds.map((nodes) => {
    const plan = planDisruption(prev, zoneReadiness(nodes), DEFAULT_EVICTION_LIMITS);
    prev = plan.states;
    return { states: states(plan.states), rates: rates(plan.rates), mode: plan.mode };
  });
}

describe('planDisruption (handleDisruption)', () => {
  it('a single node, Ready: Normal, tainting at the normal rate', () => {
    expect(passes([node('n', 'True')])).toEqual([{ states: { '': 'Normal' }, rates: { '': 0.1 }, mode: undefined }]);
  });

  it('a single node that stops reporting: every zone is down, so disruption mode — no NoExecute taints — and back when it is Ready', () => {
    const [, down, still, back] = passes(
      [node('n', 'True')],
      [node('n', 'Unknown')],
      [node('n', 'Unknown')],
      [node('n', 'True')],
    );
    expect(down).toEqual({ states: { '': 'FullDisruption' }, rates: { '': 0 }, mode: 'enter' });
    expect(still).toEqual({ states: { '': 'FullDisruption' }, rates: {}, mode: undefined });
    expect(back).toEqual({ states: { '': 'Normal' }, rates: { '': 0.1 }, mode: 'leave' });
  });

  it('a controller started while every node is down enters disruption mode at once', () => {
    expect(passes([zoned('zone1')('a', 'Unknown'), zoned('zone2')('b', 'Unknown')])[0]).toEqual({
      states: { [Z1]: 'FullDisruption', [Z2]: 'FullDisruption' },
      rates: { [Z1]: 0, [Z2]: 0 },
      mode: 'enter',
    });
  });

  it('multi-zone, one zone fully down: that zone taints at the normal rate, the other is Normal', () => {
    const up = [zoned('zone1')('a', 'True'), zoned('zone1')('b', 'True'), zoned('zone2')('c', 'True')];
    const [, after] = passes(up, [
      zoned('zone1')('a', 'Unknown'),
      zoned('zone1')('b', 'Unknown'),
      zoned('zone2')('c', 'True'),
    ]);
    expect(after).toEqual({
      states: { [Z1]: 'FullDisruption', [Z2]: 'Normal' },
      rates: { [Z1]: 0.1 },
      mode: undefined,
    });
  });

  it('all zones down: nothing is tainted; one zone back: leaving disruption mode, each zone at the rate of its state', () => {
    const [, , back] = passes(
      [zoned('zone1')('a', 'True'), zoned('zone2')('b', 'True')],
      [zoned('zone1')('a', 'Unknown'), zoned('zone2')('b', 'Unknown')],
      [zoned('zone1')('a', 'Unknown'), zoned('zone2')('b', 'True')],
    );
    expect(back).toEqual({
      states: { [Z1]: 'FullDisruption', [Z2]: 'Normal' },
      rates: { [Z1]: 0.1, [Z2]: 0.1 },
      mode: 'leave',
    });
  });

  const zoneOf = (n: number, down: number, zone = 'zone1'): Node[] =>
    Array.from({ length: n }, (_, i) => zoned(zone)(`${zone}-${i}`, i < down ? 'Unknown' : 'True'));
  it.each([
    { name: 'small cluster (≤ 50 nodes) in PartialDisruption: no NoExecute taints', size: 5, down: 3, rate: 0 },
    { name: 'large cluster (> 50 nodes) in PartialDisruption: the secondary rate', size: 60, down: 40, rate: 0.01 },
    { name: 'exactly the threshold (50) counts as small', size: 50, down: 30, rate: 0 },
  ])('$name', ({ size, down, rate }) => {
    const [, partial] = passes(
      [...zoneOf(size, 0), ...zoneOf(1, 0, 'zone2')],
      [...zoneOf(size, down), ...zoneOf(1, 0, 'zone2')],
    );
    expect(partial).toEqual({
      states: { [Z1]: 'PartialDisruption', [Z2]: 'Normal' },
      rates: { [Z1]: rate },
      mode: undefined,
    });
  });

  it('three hosts with one down: Normal, tainting goes on at the normal rate (no change)', () => {
    const [, after] = passes(zoneOf(3, 0), zoneOf(3, 1));
    expect(after).toEqual({ states: { [Z1]: 'Normal' }, rates: {}, mode: undefined });
  });

  it('a node labelled exclude-disruption does not count: the other node down is still "every zone down"', () => {
    const excluded = node('x', 'True', { labels: { 'node.kubernetes.io/exclude-disruption': 'true' } });
    expect(passes([excluded, node('n', 'Unknown')])[0]!.mode).toBe('enter');
  });

  it('no nodes (or none counted): never disruption mode', () => {
    expect(passes([], [node('x', 'Unknown', { labels: { 'node.kubernetes.io/exclude-disruption': '' } })])).toEqual([
      { states: {}, rates: {}, mode: undefined },
      { states: {}, rates: {}, mode: undefined },
    ]);
  });
});

describe('NoExecute taints of one node (processTaintBaseEviction, SwapNodeControllerTaint)', () => {
  const ne = (key: string, timeAdded = '2026-11-24T09:00:00Z'): Taint => ({ key, effect: 'NoExecute', timeAdded });
  it.each([
    { name: 'Ready True: reachable (lift the taints)', n: node('n', 'True'), want: { kind: 'reachable' } },
    { name: 'no Ready condition: nothing', n: node('n', undefined), want: { kind: 'none' } },
    { name: 'Unknown, untainted: queued afresh', n: node('n', 'Unknown'), want: { kind: 'queue', requeue: true } },
    {
      name: 'Unknown, already unreachable: queued (a no-op if known)',
      n: node('n', 'Unknown', { taints: [ne(UNREACHABLE)] }),
      want: { kind: 'queue', requeue: false },
    },
    {
      name: 'False while tainted unreachable: swapped at once',
      n: node('n', 'False', { taints: [ne(UNREACHABLE)] }),
      want: { kind: 'swapNow' },
    },
    {
      name: 'Unknown while tainted not-ready: swapped at once',
      n: node('n', 'Unknown', { taints: [ne(NOT_READY)] }),
      want: { kind: 'swapNow' },
    },
  ])('$name', ({ n, want }) => expect(noExecuteStep(n)).toEqual(want));

  it('swaps in the taint the Ready condition calls for, timeAdded now, keeping other taints and a taint already right', () => {
    const other: Taint = { key: 'x', effect: 'NoSchedule' };
    expect(swappedNoExecuteTaints(node('n', 'False', { taints: [other, ne(UNREACHABLE)] }), T0)).toEqual([
      other,
      { key: NOT_READY, effect: 'NoExecute', timeAdded: '2026-11-24T10:00:00Z' },
    ]);
    expect(swappedNoExecuteTaints(node('n', 'Unknown', { taints: [ne(UNREACHABLE)] }), T0)).toBeNull();
    expect(swappedNoExecuteTaints(node('n', 'True'), T0)).toBeNull();
  });

  it('lifts only the NoExecute lifecycle taints (markNodeAsReachable)', () => {
    const keep: Taint[] = [
      { key: UNREACHABLE, effect: 'NoSchedule' },
      { key: 'node.kubernetes.io/out-of-service', effect: 'NoExecute' },
    ];
    expect(
      withoutNoExecuteLifecycleTaints(node('n', 'True', { taints: [...keep, ne(UNREACHABLE), ne(NOT_READY)] })),
    ).toEqual(keep);
    expect(withoutNoExecuteLifecycleTaints(node('n', 'True', { taints: keep }))).toBeNull();
  });
});
