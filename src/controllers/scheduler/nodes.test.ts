import { describe, expect, it } from 'vitest';
import type { Taint, Toleration } from 'kubernetes-types/core/v1.js';
import { nodeFilter, tolerates, topologyTermsMatch } from './nodes.js';
import { node, pod } from './fixtures.test-kit.js';

describe('tolerates', () => {
  const taint: Taint = { key: 'k', value: 'v', effect: 'NoSchedule' };
  it.each<[string, Toleration, boolean]>([
    ['Equal with same key/value', { key: 'k', value: 'v' }, true],
    ['Equal with other value', { key: 'k', value: 'x' }, false],
    ['Exists on key', { key: 'k', operator: 'Exists' }, true],
    ['Exists without key tolerates all', { operator: 'Exists' }, true],
    ['other effect', { key: 'k', value: 'v', effect: 'NoExecute' }, false],
  ])('%s', (_, t, want) => expect(tolerates(t, taint)).toBe(want));
});

describe('nodeFilter', () => {
  it('explains taints, nodeSelector and cordons', () => {
    const tainted = node('n1');
    tainted.spec = { taints: [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }] };
    expect(nodeFilter(pod('p', []), tainted)?.reasons).toEqual(['node(s) had untolerated taint {dedicated: db}']);
    const p = pod('p', []);
    p.spec!.nodeSelector = { disk: 'ssd' };
    expect(nodeFilter(p, node('n1'))?.reasons).toEqual(["node(s) didn't match Pod's node affinity/selector"]);
    expect(nodeFilter(p, node('n1', { disk: 'ssd' }))).toBeNull();
    expect(nodeFilter(pod('p', []), node('n1', {}, { unschedulable: true }))?.reasons).toEqual([
      'node(s) were unschedulable',
    ]);
  });
});

describe('topologyTermsMatch', () => {
  it('ORs terms and ANDs expressions; no terms match everywhere', () => {
    const terms = [
      {
        matchLabelExpressions: [
          { key: 'zone', values: ['a'] },
          { key: 'rack', values: ['1'] },
        ],
      },
      { matchLabelExpressions: [{ key: 'zone', values: ['b'] }] },
    ];
    expect(topologyTermsMatch(terms, { zone: 'a', rack: '1' })).toBe(true);
    expect(topologyTermsMatch(terms, { zone: 'a' })).toBe(false);
    expect(topologyTermsMatch(terms, { zone: 'b' })).toBe(true);
    expect(topologyTermsMatch(undefined, {})).toBe(true);
  });
});
