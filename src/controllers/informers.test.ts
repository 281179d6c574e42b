import { describe, expect, it } from 'vitest';
import type { ReplicaSet } from 'kubernetes-types/apps/v1.js';
import { queueOwnKey } from './informers.js';

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
