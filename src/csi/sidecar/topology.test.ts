import { describe, expect, it } from 'vitest';
import { accessibilityRequirements, allowedTopologySegments, nodeAffinityFrom, nodeSegments } from './topology.js';

const K = 'zone';
const seg = (v: string) => ({ [K]: v });
const vals = (ts: Array<{ segments?: Record<string, string> }> | undefined) => (ts ?? []).map((t) => t.segments?.[K]);

describe('allowedTopologySegments', () => {
  it('expands each term into the cross product of its values', () => {
    expect(
      allowedTopologySegments([
        {
          matchLabelExpressions: [
            { key: 'r', values: ['r1'] },
            { key: K, values: ['b', 'a'] },
          ],
        },
      ]),
    ).toEqual([
      { r: 'r1', [K]: 'a' },
      { r: 'r1', [K]: 'b' },
    ]);
  });
  it('is empty without terms', () => expect(allowedTopologySegments(undefined)).toEqual([]));
});

describe('accessibilityRequirements', () => {
  it.each([
    { name: 'no topology anywhere', allowed: [], cluster: [], selected: undefined, req: undefined, pref: undefined },
    {
      name: 'cluster, selected node first',
      allowed: [],
      cluster: [seg('a'), seg('b'), seg('c')],
      selected: seg('b'),
      req: ['a', 'b', 'c'],
      pref: ['b', 'c', 'a'],
    },
    {
      name: 'allowed wins over cluster',
      allowed: [seg('c'), seg('a')],
      cluster: [seg('a'), seg('b'), seg('c')],
      selected: seg('c'),
      req: ['a', 'c'],
      pref: ['c', 'a'],
    },
    {
      name: 'selected node missing from cluster is added',
      allowed: [],
      cluster: [seg('a')],
      selected: seg('z'),
      req: ['a', 'z'],
      pref: ['z', 'a'],
    },
  ])('$name', ({ allowed, cluster, selected, req, pref }) => {
    const r = accessibilityRequirements({
      allowed,
      cluster,
      claimName: 'c',
      ...(selected ? { selected, selectedNode: 'n' } : {}),
    });
    if (req === undefined) return expect(r).toBeUndefined();
    expect(vals(r?.requisite)).toEqual(req);
    expect(vals(r?.preferred)).toEqual(pref);
  });
  it('a selected node outside allowedTopologies is an error', () => {
    expect(() =>
      accessibilityRequirements({
        allowed: [seg('a')],
        cluster: [],
        selected: seg('b'),
        selectedNode: 'n2',
        claimName: 'c',
      }),
    ).toThrow(/not in allowed topologies/);
  });
  it('without a selected node, preferred is a rotation of requisite', () => {
    const r = accessibilityRequirements({ allowed: [], cluster: [seg('a'), seg('b'), seg('c')], claimName: 'x' });
    expect([...vals(r?.preferred)].sort()).toEqual(['a', 'b', 'c']);
  });
});

describe('nodeSegments / nodeAffinityFrom', () => {
  it('reads the topology keys from the node labels', () => {
    expect(nodeSegments({ metadata: { name: 'n', labels: { [K]: 'a', other: 'x' } } }, [K])).toEqual(seg('a'));
    expect(() => nodeSegments({ metadata: { name: 'n' } }, [K])).toThrow(/not found on node n/);
  });
  it('one node selector term per accessible topology', () => {
    expect(nodeAffinityFrom([{ segments: { [K]: 'a', r: 'r1' } }, { segments: seg('b') }])).toEqual({
      required: {
        nodeSelectorTerms: [
          {
            matchExpressions: [
              { key: 'r', operator: 'In', values: ['r1'] },
              { key: K, operator: 'In', values: ['a'] },
            ],
          },
          { matchExpressions: [{ key: K, operator: 'In', values: ['b'] }] },
        ],
      },
    });
    expect(nodeAffinityFrom([])).toBeUndefined();
  });
});
