import { describe, expect, it, vi } from 'vitest';
import { openSqliteStore } from '../store/sqlite.js';
import type { Store, WatchOptions } from '../store/store.js';
import { ExpiredError, TimeoutError } from '../util/errors.js';
import { WatchCache, type CacheEvent } from './watchcache.js';

const obj = (name: string, v: string): string => JSON.stringify({ metadata: { name }, data: { v } });

describe('WatchCache', () => {
  it('mirrors the store and lists in key order with prefixes', async () => {
    const store = openSqliteStore({ path: ':memory:' });
    await store.create('/registry/core/configmaps/ns1/b', obj('b', '1'));
    const cache = new WatchCache(store, '/registry/core/configmaps/');
    await cache.start();
    await store.create('/registry/core/configmaps/ns1/a', obj('a', '1'));
    await store.create('/registry/core/configmaps/ns2/c', obj('c', '1'));
    await store.create('/registry/core/secrets/ns1/x', obj('x', '1'));
    expect(cache.list().map((c) => c.obj.metadata.name)).toEqual(['a', 'b', 'c']);
    expect(cache.list('/registry/core/configmaps/ns1/').map((c) => c.obj.metadata.name)).toEqual(['a', 'b']);
    const a = cache.get('/registry/core/configmaps/ns1/a')!;
    expect(a.obj.metadata.resourceVersion).toBe(String(a.rev));
    expect(JSON.parse(a.json)).toEqual(a.obj);
    cache.stop();
    await store.close();
  });

  it('keeps a secondary index in step with creates, changes of the indexed value and deletes', async () => {
    const store = openSqliteStore({ path: ':memory:' });
    const P = '/registry/core/configmaps/ns/';
    await store.create(`${P}before`, obj('before', 'n1'));
    const cache = new WatchCache(store, '/registry/core/configmaps/');
    const byV = (v: string): string[] =>
      cache
        .byIndex('v', v)
        .map((c) => c.obj.metadata.name!)
        .sort();
    await cache.start();
    cache.addIndex('v', (o) => [String((o as { data?: { v?: string } }).data?.v ?? '')]);
    const after = await store.create(`${P}after`, obj('after', 'n1'));
    expect(byV('n1')).toEqual(['after', 'before']);
    await store.update(`${P}after`, obj('after', 'n2'), after.modRevision);
    expect(byV('n1')).toEqual(['before']);
    expect(byV('n2')).toEqual(['after']);
    await store.delete(`${P}before`);
    expect(byV('n1')).toEqual([]);
    expect(cache.byIndex('unknown', 'n2')).toEqual([]);
    cache.stop();
    await store.close();
  });

  it('replays history after a revision, then delivers live events; too old → Expired; future → Timeout', async () => {
    const store = openSqliteStore({ path: ':memory:' });
    const cache = new WatchCache(store, '/r/', 3);
    await cache.start();
    const k1 = await store.create('/r/a', obj('a', '1'));
    await store.update('/r/a', obj('a', '2'));
    await store.update('/r/a', obj('a', '3'));
    const seen: CacheEvent[] = [];
    const w = cache.watch(k1.modRevision, (e) => seen.push(e));
    expect(seen.map((e) => e.type)).toEqual(['MODIFIED', 'MODIFIED']);
    await store.delete('/r/a');
    expect(seen.map((e) => e.type)).toEqual(['MODIFIED', 'MODIFIED', 'DELETED']);
    expect(seen[2]!.cur.obj.data).toEqual({ v: '3' });
    expect(seen[2]!.cur.obj.metadata.resourceVersion).toBe(String(seen[2]!.rev));
    w.close();
    await store.create('/r/b', obj('b', '1'));
    expect(seen).toHaveLength(3);
    expect(() => cache.watch(k1.modRevision, () => undefined)).toThrow(ExpiredError);
    expect(() => cache.watch(store.currentRevision() + 5, () => undefined)).toThrow(TimeoutError);
    cache.stop();
    await store.close();
  });
});

describe('WatchCache history of superseded states', () => {
  it('keeps them as JSON and parses them again when a resumed watch replays them', async () => {
    const store = openSqliteStore({ path: ':memory:' });
    const cache = new WatchCache(store, '/r/', 10);
    await cache.start();
    const created = await store.create('/r/a', obj('a', '1'));
    await store.update('/r/a', obj('a', '2'));
    const current = cache.get('/r/a')!;
    // The current state is parsed once and shared.
    expect(current.obj).toBe(cache.get('/r/a')!.obj);
    const seen: CacheEvent[] = [];
    cache.watch(created.modRevision - 1, (e) => seen.push(e)).close();
    expect(seen.map((e) => [e.type, e.prev?.obj.data, e.cur.obj.data])).toEqual([
      ['ADDED', undefined, { v: '1' }],
      ['MODIFIED', { v: '1' }, { v: '2' }],
    ]);
    expect(seen[0]!.cur.obj.metadata.resourceVersion).toBe(String(created.modRevision));
    expect(JSON.parse(seen[0]!.cur.json)).toEqual(seen[0]!.cur.obj);
    cache.stop();
    await store.close();
  });
});

describe('WatchCache losing its store watch', () => {
  it('ends client watches, answers resumes with Expired until relisted, then serves the store again', async () => {
    const store = openSqliteStore({ path: ':memory:' });
    // The store's watch ends with ExpiredError (as etcd's does when compaction overtook it) on demand.
    let fail: (err: Error) => void = () => {};
    const failing: Store = Object.assign(Object.create(store) as Store, {
      watch: (prefix: string, o: WatchOptions) => {
        fail = (err) => o.onError?.(err);
        return store.watch(prefix, o);
      },
    });
    const cache = new WatchCache(failing, '/r/');
    await cache.start();
    const a = await store.create('/r/a', obj('a', '1'));
    let ended = false;
    cache.watch(
      a.modRevision,
      () => {},
      () => (ended = true),
    );
    fail(new ExpiredError('compacted'));
    expect(ended).toBe(true);
    expect(cache.isSynced()).toBe(false);
    expect(() => cache.watch(a.modRevision, () => {})).toThrow(ExpiredError);
    await store.create('/r/b', obj('b', '1'));
    await vi.waitFor(() => expect(cache.isSynced()).toBe(true));
    expect(cache.list().map((c) => c.obj.metadata.name)).toEqual(['a', 'b']);
    cache.stop();
    await store.close();
  });
});
