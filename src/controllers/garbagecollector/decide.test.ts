import type { OwnerReference } from 'kubernetes-types/meta/v1.js';
import { describe, expect, it } from 'vitest';
import type { KubeObjectLike } from '../../client/rest.js';
import { decideDeleting, decideOwned, unblocked, withoutOwners, type GcAction, type OwnerState } from './decide.js';

const ref = (uid: string, extra: Partial<OwnerReference> = {}): OwnerReference => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  name: `o-${uid}`,
  uid,
  ...extra,
});
const obj = (
  uid: string,
  o: { owners?: OwnerReference[]; finalizers?: string[]; deleting?: boolean } = {},
): KubeObjectLike => ({
  metadata: {
    name: `n-${uid}`,
    namespace: 'ns',
    uid,
    ownerReferences: o.owners,
    finalizers: o.finalizers,
    deletionTimestamp: o.deleting ? '2026-11-24T00:00:00Z' : undefined,
  },
});
const states = (s: Record<string, OwnerState>): Map<string, OwnerState> => new Map(Object.entries(s));

describe('decideOwned (attemptToDeleteItem)', () => {
  it.each<{
    name: string;
    item: KubeObjectLike;
    owners: Record<string, OwnerState>;
    dependents?: KubeObjectLike[];
    want: GcAction;
  }>([
    { name: 'no owners: nothing', item: obj('i'), owners: {}, want: { kind: 'none' } },
    {
      name: 'owner exists: nothing',
      item: obj('i', { owners: [ref('a')] }),
      owners: { a: 'solid' },
      want: { kind: 'none' },
    },
    {
      name: 'owner gone: background delete',
      item: obj('i', { owners: [ref('a')] }),
      owners: { a: 'dangling' },
      want: { kind: 'delete', policy: 'Background', unblock: false },
    },
    {
      name: 'all owners gone, item has an orphan finalizer: orphan delete',
      item: obj('i', { owners: [ref('a'), ref('b')], finalizers: ['orphan'] }),
      owners: { a: 'dangling', b: 'dangling' },
      want: { kind: 'delete', policy: 'Orphan', unblock: false },
    },
    {
      name: 'item has a foregroundDeletion finalizer: foreground delete',
      item: obj('i', { owners: [ref('a')], finalizers: ['foregroundDeletion'] }),
      owners: { a: 'dangling' },
      want: { kind: 'delete', policy: 'Foreground', unblock: false },
    },
    {
      name: 'one solid owner left: only the dangling and waiting references go',
      item: obj('i', { owners: [ref('a'), ref('b'), ref('c')] }),
      owners: { a: 'solid', b: 'dangling', c: 'waiting' },
      want: { kind: 'removeOwnerReferences', uids: ['b', 'c'] },
    },
    {
      name: 'owner waiting, no dependents: plain delete',
      item: obj('i', { owners: [ref('a')] }),
      owners: { a: 'waiting' },
      want: { kind: 'delete', policy: 'Background', unblock: false },
    },
    {
      name: 'owner waiting, item has dependents: foreground delete',
      item: obj('i', { owners: [ref('a')] }),
      owners: { a: 'waiting' },
      dependents: [obj('d', { owners: [ref('i')] })],
      want: { kind: 'delete', policy: 'Foreground', unblock: false },
    },
    {
      name: 'owner waiting and a dependent waiting too (cycle): unblock, then foreground delete',
      item: obj('i', { owners: [ref('a', { blockOwnerDeletion: true })] }),
      owners: { a: 'waiting' },
      dependents: [obj('d', { owners: [ref('i')], finalizers: ['foregroundDeletion'], deleting: true })],
      want: { kind: 'delete', policy: 'Foreground', unblock: true },
    },
    {
      name: 'cluster-scoped item naming a namespaced owner: refused, nothing deleted',
      item: obj('i', { owners: [ref('a'), ref('b')] }),
      owners: { a: 'invalidScope', b: 'dangling' },
      want: { kind: 'invalidOwnerScope', refs: [ref('a')] },
    },
  ])('$name', ({ item, owners, dependents, want }) =>
    expect(decideOwned(item, states(owners), dependents ?? [])).toEqual(want),
  );
});

describe('decideDeleting (foreground and orphan owners)', () => {
  const owner = (finalizers: string[]): KubeObjectLike => obj('o', { finalizers, deleting: true });
  const blocking = obj('d1', { owners: [ref('o', { blockOwnerDeletion: true })] });
  const loose = obj('d2', { owners: [ref('o')] });
  const blockingOther = obj('d3', { owners: [ref('o'), ref('x', { blockOwnerDeletion: true })] });

  it.each<{ name: string; item: KubeObjectLike; dependents: KubeObjectLike[]; want: GcAction | undefined }>([
    { name: 'not being deleted: its owners decide', item: obj('o'), dependents: [loose], want: undefined },
    {
      name: 'deleted without GC finalizer: nothing',
      item: owner(['example.com/x']),
      dependents: [loose],
      want: { kind: 'none' },
    },
    {
      name: 'orphan: every dependent loses the reference',
      item: owner(['orphan']),
      dependents: [blocking, loose],
      want: { kind: 'orphanDependents', dependents: [blocking, loose] },
    },
    {
      name: 'foreground with a blocking dependent: wait',
      item: owner(['foregroundDeletion']),
      dependents: [blocking, loose],
      want: { kind: 'waitForDependents', blocking: [blocking] },
    },
    {
      name: 'foreground, only non-blocking dependents: finalizer goes',
      item: owner(['foregroundDeletion']),
      dependents: [loose, blockingOther],
      want: { kind: 'removeForegroundFinalizer' },
    },
    {
      name: 'foreground, no dependents: finalizer goes',
      item: owner(['foregroundDeletion']),
      dependents: [],
      want: { kind: 'removeForegroundFinalizer' },
    },
  ])('$name', ({ item, dependents, want }) => expect(decideDeleting(item, dependents)).toEqual(want));
});

describe('ownerReference edits', () => {
  it('withoutOwners drops the named uids, undefined when none is left', () => {
    const o = obj('i', { owners: [ref('a'), ref('b')] });
    expect(withoutOwners(o, ['a'])).toEqual([ref('b')]);
    expect(withoutOwners(o, ['a', 'b'])).toBeUndefined();
  });
  it('unblocked clears blockOwnerDeletion only where it was set', () => {
    expect(unblocked(obj('i', { owners: [ref('a', { blockOwnerDeletion: true }), ref('b')] }))).toEqual([
      ref('a', { blockOwnerDeletion: false }),
      ref('b'),
    ]);
  });
});
