import { describe, it, expect } from 'vitest';
import { ConflictError, InvalidError } from '../../../util/errors.js';
import { newObjectBatcher, type ObjectAccess } from './batcher.js';

type Obj = { rv: number; items: string[] };

function fakeStore(o: { conflicts?: number; initial?: Obj } = {}) {
  let obj: Obj | undefined = o.initial;
  let conflicts = o.conflicts ?? 0;
  const log: string[] = [];
  const access: ObjectAccess<Obj> = {
    get: async () => {
      log.push('get');
      return obj && { ...obj, items: [...obj.items] };
    },
    write: async (next, current) => {
      log.push(current ? 'update' : 'create');
      if (conflicts-- > 0) {
        if (obj) obj = { ...obj, rv: obj.rv + 1 }; // someone else wrote meanwhile
        throw new ConflictError('stale');
      }
      if (current && obj && current.rv !== obj.rv) throw new ConflictError('stale');
      obj = { ...next, rv: (obj?.rv ?? 0) + 1 };
      return obj;
    },
  };
  return { access, log, get: () => obj };
}
const add =
  (s: string) =>
  (cur: Obj | undefined): Obj => ({ rv: cur?.rv ?? 0, items: [...(cur?.items ?? []), s] });

describe('object batcher', () => {
  it('applies edits waiting together in one read and one write', async () => {
    const st = fakeStore({ initial: { rv: 1, items: [] } });
    const b = newObjectBatcher(st.access);
    const first = b.apply(add('a')); // starts a batch of its own
    await Promise.all([first, b.apply(add('b')), b.apply(add('c')), b.apply(add('d'))]);
    expect(st.get()?.items).toEqual(['a', 'b', 'c', 'd']);
    expect(st.log).toEqual(['get', 'update', 'update']); // the second batch starts from what the first wrote
  });

  it('creates a missing object and skips the write when nothing changes', async () => {
    const st = fakeStore();
    const b = newObjectBatcher(st.access);
    await b.apply(add('a'));
    await b.apply(() => undefined);
    expect(st.get()?.items).toEqual(['a']);
    expect(st.log).toEqual(['get', 'create', 'get']); // a no-op is decided on a fresh read
  });

  it('re-reads and re-applies after a conflict', async () => {
    const st = fakeStore({ initial: { rv: 1, items: ['x'] }, conflicts: 2 });
    const b = newObjectBatcher(st.access);
    await b.apply(add('a'));
    expect(st.get()?.items).toEqual(['x', 'a']);
    expect(st.log).toEqual(['get', 'update', 'get', 'update', 'get', 'update']);
  });

  it('a refusing edit fails alone; the others are written', async () => {
    const st = fakeStore({ initial: { rv: 1, items: [] } });
    const b = newObjectBatcher(st.access);
    const busy = b.apply(add('first'));
    const bad = b.apply(() => {
      throw new InvalidError('collides');
    });
    const good = b.apply(add('b'));
    await busy;
    await expect(bad).rejects.toThrow('collides');
    await expect(good).resolves.toMatchObject({ items: ['first', 'b'] });
  });

  it('a change made by another writer is noticed: a conflict, then a fresh read', async () => {
    const st = fakeStore({ initial: { rv: 1, items: [] } });
    const b = newObjectBatcher(st.access);
    await b.apply(add('a'));
    await st.access.write({ rv: 2, items: ['a', 'someone else'] }, { rv: 2, items: [] }); // rv 2 → 3
    await b.apply(add('b'));
    expect(st.get()?.items).toEqual(['a', 'someone else', 'b']);
  });

  it('a no-op decided on the cached copy is checked against a fresh read', async () => {
    const st = fakeStore({ initial: { rv: 1, items: [] } });
    const b = newObjectBatcher(st.access);
    await b.apply(add('a'));
    await st.access.write({ rv: 2, items: [] }, { rv: 2, items: [] }); // someone removed 'a'
    const ensureA = (cur: Obj | undefined): Obj | undefined => (cur?.items.includes('a') ? undefined : add('a')(cur));
    await b.apply(ensureA);
    expect(st.get()?.items).toEqual(['a']);
  });
});
