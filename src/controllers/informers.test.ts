import { describe, expect, it } from 'vitest';
import type { ReplicaSet } from 'kubernetes-types/apps/v1.js';
import { mapToKeys, queueOwnKey } from './informers.js';

describe('queueOwnKey', () => {
  it('queues the object’s own key on add, update and delete, tombstones included', () => {
    const queued: string[] = [];
    const h = queueOwnKey<ReplicaSet>({ add: (k) => queued.push(k), addAfter: () => undefined });
    const rs = (name: string): ReplicaSet => ({ metadata: { namespace: 'ns', name } });
    h.onAdd!(rs('a'));
    h.onUpdate!(rs('b'), rs('b'));
    h.onDelete!(rs('c'));
    h.onDelete!({ tombstone: true, key: 'ns/d', obj: rs('d') });
    h.onAdd!({ metadata: { name: 'cluster-scoped' } });
    expect(queued).toEqual(['ns/a', 'ns/b', 'ns/c', 'ns/d', 'cluster-scoped']);
  });
});

describe('mapToKeys', () => {
  type Obj = { metadata?: { labels?: Record<string, string> } };
  const owners = (o: Obj): string[] => Object.values(o.metadata?.labels ?? {});
  const obj = (...owners: string[]): Obj => ({ metadata: { labels: Object.fromEntries(owners.map((o) => [o, o])) } });

  it('queues the keys an object maps to on add, update (new object) and delete, each once', () => {
    const queued: string[] = [];
    const h = mapToKeys(owners)({ add: (k) => queued.push(k), addAfter: () => undefined });
    h.onAdd!(obj('a', 'b'));
    h.onUpdate!(obj('x'), obj('c'));
    h.onDelete!({ tombstone: true, key: 'k', obj: obj('d') });
    expect(queued).toEqual(['a', 'b', 'c', 'd']);
  });

  it('with includeOld, an update queues the old object’s keys too; a single key or none works', () => {
    const queued: string[] = [];
    const q = { add: (k: string) => queued.push(k), addAfter: () => undefined };
    mapToKeys(owners, { includeOld: true })(q).onUpdate!(obj('old', 'same'), obj('same', 'new'));
    const single = mapToKeys((o: Obj) => o.metadata?.labels?.['x'])(q);
    single.onAdd!(obj('x'));
    single.onAdd!(obj('y'));
    expect(queued).toEqual(['old', 'same', 'new', 'x']);
  });
});
