import { describe, expect, it } from 'vitest';
import type { CachedObject } from '../watchcache.js';
import { decodeContinue, encodeContinue, pageFromCache } from './paging.js';
import type { Selection } from './request.js';
import { ApiBadRequestError } from '../status.js';

const obj = (name: string, tier: string): CachedObject => {
  const o = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { tier } } };
  return { key: `/registry/core/configmaps/ns/${name}`, obj: o, json: JSON.stringify(o), rev: 1 };
};
const ALL = [obj('a', 'gold'), obj('b', 'iron'), obj('c', 'gold'), obj('d', 'gold'), obj('e', 'iron')];
const everything: Selection = { everything: true, matches: () => true };
const gold: Selection = { everything: false, matches: (o) => o.metadata.labels?.tier === 'gold' };
const names = (items: readonly CachedObject[]) => items.map((c) => c.obj.metadata.name);

describe('pageFromCache', () => {
  it.each([
    {
      name: 'no limit: everything',
      sel: everything,
      after: '',
      limit: 0,
      want: ['a', 'b', 'c', 'd', 'e'],
      next: undefined,
      remaining: undefined,
    },
    {
      name: 'first page counts what is left',
      sel: everything,
      after: '',
      limit: 2,
      want: ['a', 'b'],
      next: 'b',
      remaining: 3,
    },
    {
      name: 'resumes after the last key',
      sel: everything,
      after: ALL[1]!.key,
      limit: 2,
      want: ['c', 'd'],
      next: 'd',
      remaining: 1,
    },
    {
      name: 'last page exactly full: no continue',
      sel: everything,
      after: ALL[2]!.key,
      limit: 2,
      want: ['d', 'e'],
      next: undefined,
      remaining: undefined,
    },
    {
      name: 'with a selector, no count of what is left',
      sel: gold,
      after: '',
      limit: 2,
      want: ['a', 'c'],
      next: 'c',
      remaining: undefined,
    },
    {
      name: 'selector, short last page',
      sel: gold,
      after: ALL[2]!.key,
      limit: 2,
      want: ['d'],
      next: undefined,
      remaining: undefined,
    },
  ])('$name', ({ sel, after, limit, want, next, remaining }) => {
    const page = pageFromCache(ALL, sel, after, limit);
    expect(names(page.items)).toEqual(want);
    expect(page.next === undefined ? undefined : page.next.split('/').pop()).toEqual(next);
    expect(page.remaining).toEqual(remaining);
  });
});

describe('continue tokens', () => {
  it('round-trips the revision and the start key', () => {
    expect(decodeContinue(encodeContinue({ rv: 42, start: ALL[0]!.key }))).toEqual({ rv: 42, start: ALL[0]!.key });
  });
  it.each(['not-base64!', Buffer.from('{"rv":"x"}').toString('base64url'), ''])('refuses %j with 400', (t) => {
    expect(() => decodeContinue(t)).toThrow(ApiBadRequestError);
  });
});
