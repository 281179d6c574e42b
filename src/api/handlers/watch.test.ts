import { describe, expect, it } from 'vitest';
import type { CachedObject, CacheEvent } from '../watchcache.js';
import type { Selection } from './request.js';
import { visibleEvent } from './watch.js';

const state = (tier: string): CachedObject => {
  const o = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', labels: { tier } } };
  return { key: '/registry/core/configmaps/ns/a', obj: o, json: JSON.stringify(o), rev: 1 };
};
const ev = (type: CacheEvent['type'], cur: string, prev?: string): CacheEvent => ({
  type,
  key: '/registry/core/configmaps/ns/a',
  cur: state(cur),
  prev: prev === undefined ? undefined : state(prev),
  rev: 2,
});
const everything: Selection = { everything: true, matches: () => true };
const gold: Selection = { everything: false, matches: (o) => o.metadata.labels?.tier === 'gold' };

describe('visibleEvent (what a watcher with selectors sees)', () => {
  it.each([
    { name: 'no selector: as it happened', sel: everything, e: ev('MODIFIED', 'iron', 'gold'), want: 'MODIFIED' },
    { name: 'added, matching', sel: gold, e: ev('ADDED', 'gold'), want: 'ADDED' },
    { name: 'added, not matching', sel: gold, e: ev('ADDED', 'iron'), want: undefined },
    { name: 'still matching', sel: gold, e: ev('MODIFIED', 'gold', 'gold'), want: 'MODIFIED' },
    { name: 'starts matching: ADDED', sel: gold, e: ev('MODIFIED', 'gold', 'iron'), want: 'ADDED' },
    { name: 'stops matching: DELETED', sel: gold, e: ev('MODIFIED', 'iron', 'gold'), want: 'DELETED' },
    { name: 'never matched', sel: gold, e: ev('MODIFIED', 'iron', 'iron'), want: undefined },
    { name: 'deleted while matching', sel: gold, e: ev('DELETED', 'gold', 'gold'), want: 'DELETED' },
    { name: 'deleted, never seen', sel: gold, e: ev('DELETED', 'iron', 'iron'), want: undefined },
  ] as const)('$name → $want', ({ sel, e, want }) => {
    expect(visibleEvent(sel, e)).toBe(want);
  });
});
