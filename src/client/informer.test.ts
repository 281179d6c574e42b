import { describe, expect, it } from 'vitest';
import { ExpiredError, UnavailableError } from '../util/errors.js';
import { FakeClock, flushMicrotasks } from './fake-clock.test-kit.js';
import { isTombstone, newInformer, stripManagedFields, waitForCacheSync, type Tombstone } from './informer.js';
import type { ListerWatcher } from './reflector.js';
import type { ObjectList } from './rest.js';
import type { WatchEvent } from './watch.js';

interface Obj {
  kind?: string;
  apiVersion?: string;
  metadata: { name: string; namespace?: string; resourceVersion?: string };
  spec?: { size?: number; node?: string };
}
const obj = (name: string, rv: string, size = 1): Obj => ({ metadata: { name, resourceVersion: rv }, spec: { size } });

/** A watch stream the test feeds by hand. */
class Chan<T> implements AsyncIterable<T> {
  private buf: Array<{ v?: T; end?: boolean; err?: unknown }> = [];
  private wake: (() => void) | undefined;
  push(v: T): void {
    this.buf.push({ v });
    this.wake?.();
  }
  end(): void {
    this.buf.push({ end: true });
    this.wake?.();
  }
  fail(err: unknown): void {
    this.buf.push({ err });
    this.wake?.();
  }
  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    for (;;) {
      const item = this.buf.shift();
      if (!item) {
        await new Promise<void>((r) => (this.wake = r));
        continue;
      }
      if (item.end) return;
      if (item.err) throw item.err;
      yield item.v as T;
    }
  }
}

class FakeLW implements ListerWatcher<Obj> {
  items: Obj[] = [];
  rv = '10';
  listCalls: Array<{ limit?: number; continue?: string }> = [];
  watches: Array<{ rv: string; bookmarks: boolean; chan: Chan<WatchEvent<Obj>> }> = [];
  listFailures = 0;
  list(o: { limit?: number; continue?: string }): Promise<ObjectList<Obj>> {
    this.listCalls.push({ limit: o.limit, continue: o.continue });
    if (this.listFailures > 0) {
      this.listFailures--;
      return Promise.reject(new UnavailableError('connection refused'));
    }
    const start = o.continue ? Number(o.continue) : 0;
    const limit = o.limit ?? this.items.length;
    const page = this.items.slice(start, start + limit);
    const next = start + limit < this.items.length ? String(start + limit) : undefined;
    return Promise.resolve({
      kind: 'ThingList',
      apiVersion: 'example/v1',
      metadata: { resourceVersion: this.rv, continue: next },
      items: page.map((x) => structuredClone(x)),
    });
  }
  watch(o: { resourceVersion: string; allowWatchBookmarks: boolean }): AsyncIterable<WatchEvent<Obj>> {
    const chan = new Chan<WatchEvent<Obj>>();
    this.watches.push({ rv: o.resourceVersion, bookmarks: o.allowWatchBookmarks, chan });
    return chan;
  }
  last(): Chan<WatchEvent<Obj>> {
    const w = this.watches.at(-1);
    if (!w) throw new Error('no watch');
    return w.chan;
  }
}

function harness(opts: { resyncMs?: number; pageSize?: number } = {}) {
  const clock = new FakeClock();
  const lw = new FakeLW();
  const log: string[] = [];
  const inf = newInformer<Obj>({
    lw,
    clock,
    resyncMs: opts.resyncMs,
    pageSize: opts.pageSize ?? 2,
    watchTimeoutSeconds: () => 300,
  });
  inf.addEventHandler({
    onAdd: (o) => log.push(`add ${o.metadata.name}@${o.metadata.resourceVersion}`),
    onUpdate: (a, b) =>
      log.push(`update ${a.metadata.name}@${a.metadata.resourceVersion}->${b.metadata.resourceVersion}`),
    onDelete: (o: Obj | Tombstone<Obj>) =>
      log.push(isTombstone(o) ? `tombstone ${o.key}@${o.obj.metadata.resourceVersion}` : `delete ${o.metadata.name}`),
  });
  const ctl = new AbortController();
  return { clock, lw, log, inf, ctl, start: () => inf.run(ctl.signal) };
}

describe('informer', () => {
  it('lists in pages, syncs, then watches from the list resourceVersion with bookmarks', async () => {
    const h = harness();
    h.lw.items = [obj('a', '3'), obj('b', '4'), obj('c', '5')];
    const running = h.start();
    await h.inf.waitForSync();
    expect(h.inf.hasSynced()).toBe(true);
    expect(h.lw.listCalls).toEqual([
      { limit: 2, continue: undefined },
      { limit: 2, continue: '2' },
    ]);
    expect(h.log).toEqual(['add a@3', 'add b@4', 'add c@5']);
    await flushMicrotasks();
    expect(h.lw.watches.map((w) => [w.rv, w.bookmarks])).toEqual([['10', true]]);
    // List items get their kind back from the list's kind.
    expect(h.inf.lister.get('a')?.kind).toBe('Thing');
    expect(h.inf.lister.get('a')?.apiVersion).toBe('example/v1');
    h.ctl.abort();
    await running;
  });

  it('applies watch events to the cache and handlers in order', async () => {
    const h = harness();
    h.lw.items = [obj('a', '3')];
    const running = h.start();
    await h.inf.waitForSync();
    await flushMicrotasks();
    const w = h.lw.last();
    w.push({ type: 'ADDED', object: obj('b', '11') });
    w.push({ type: 'MODIFIED', object: obj('a', '12', 7) });
    w.push({ type: 'DELETED', object: obj('b', '13') });
    await flushMicrotasks();
    expect(h.log.slice(1)).toEqual(['add b@11', 'update a@3->12', 'delete b']);
    expect(h.inf.lister.get('a')?.spec?.size).toBe(7);
    expect(h.inf.lister.get('b')).toBeUndefined();
    expect(h.inf.lastSyncResourceVersion()).toBe('13');
    h.ctl.abort();
    await running;
  });

  it('resumes from the last resourceVersion (bookmarks included) after a dropped watch, without relisting', async () => {
    const h = harness();
    const running = h.start();
    await h.inf.waitForSync();
    await flushMicrotasks();
    h.lw.last().push({ type: 'ADDED', object: obj('a', '11') });
    h.lw.last().push({ type: 'BOOKMARK', object: { metadata: { name: '', resourceVersion: '20' } } });
    h.lw.last().end();
    await flushMicrotasks();
    expect(h.lw.watches.map((w) => w.rv)).toEqual(['10', '20']);
    expect(h.lw.listCalls).toHaveLength(1);
    expect(h.log).toEqual(['add a@11']); // the bookmark is not an object event

    h.lw.last().fail(new UnavailableError('connection reset'));
    await flushMicrotasks();
    expect(h.lw.watches).toHaveLength(2); // waiting out the backoff
    await h.clock.advance(800);
    expect(h.lw.watches.map((w) => w.rv)).toEqual(['10', '20', '20']);
    expect(h.lw.listCalls).toHaveLength(1);
    h.ctl.abort();
    await running;
  });

  it('relists on 410 Expired: survivors get onUpdate, vanished objects a tombstone', async () => {
    const h = harness();
    h.lw.items = [obj('keep', '3'), obj('gone', '4')];
    const running = h.start();
    await h.inf.waitForSync();
    await flushMicrotasks();
    h.lw.items = [obj('keep', '30'), obj('new', '31')];
    h.lw.rv = '40';
    h.lw.last().push({ type: 'ERROR', error: new ExpiredError('too old resource version'), object: {} });
    await flushMicrotasks();
    // nothing arrived since the list: the relist waits out the first backoff step
    expect(h.lw.listCalls).toHaveLength(1);
    await h.clock.advance(800);
    expect(h.lw.listCalls).toHaveLength(2);
    expect(h.log.slice(2)).toEqual(['add new@31', 'update keep@3->30', 'tombstone gone@4']);
    expect(h.lw.watches.map((w) => w.rv)).toEqual(['10', '40']);
    h.ctl.abort();
    await running;
  });

  it('a transform (stripManagedFields) applies to listed and watched objects before cache and handlers', async () => {
    const lw = new FakeLW();
    const withFields = (name: string, rv: string): Obj =>
      ({ metadata: { name, resourceVersion: rv, managedFields: [{ manager: 'm' }] } }) as Obj;
    lw.items = [withFields('a', '3')];
    const inf = newInformer<Obj>({ lw, clock: new FakeClock(), transform: stripManagedFields });
    const seen: Obj[] = [];
    inf.addEventHandler({ onAdd: (o) => seen.push(o), onUpdate: (_, o) => seen.push(o) });
    const ctl = new AbortController();
    const running = inf.run(ctl.signal);
    await inf.waitForSync();
    await flushMicrotasks();
    lw.last().push({ type: 'MODIFIED', object: withFields('a', '11') });
    await flushMicrotasks();
    expect(seen.map((o) => o.metadata)).toEqual([
      { name: 'a', resourceVersion: '3' },
      { name: 'a', resourceVersion: '11' },
    ]);
    expect(inf.lister.get('a')?.metadata).toEqual({ name: 'a', resourceVersion: '11' });
    ctl.abort();
    await running;
  });

  it('retries a failed list with backoff', async () => {
    const h = harness();
    h.lw.listFailures = 2;
    const running = h.start();
    await flushMicrotasks();
    expect(h.inf.hasSynced()).toBe(false);
    expect(h.clock.deadlines().map((d) => d - h.clock.now())).toEqual([800]);
    await h.clock.advance(800);
    expect(h.clock.deadlines().map((d) => d - h.clock.now())).toEqual([1600]);
    await h.clock.advance(1600);
    expect(h.inf.hasSynced()).toBe(true);
    h.ctl.abort();
    await running;
  });

  it('resync re-delivers onUpdate(obj, obj) for every cached object', async () => {
    const h = harness({ resyncMs: 60_000 });
    h.lw.items = [obj('a', '3'), obj('b', '4')];
    const running = h.start();
    await h.inf.waitForSync();
    h.log.length = 0;
    await h.clock.advance(60_000);
    expect(h.log.sort()).toEqual(['update a@3->3', 'update b@4->4']);
    h.ctl.abort();
    await running;
  });

  it('a handler added after sync receives onAdd for existing objects; indexers answer byIndex', async () => {
    const h = harness();
    h.lw.items = [
      { metadata: { name: 'p1', namespace: 'ns' }, spec: { node: 'n1' } },
      { metadata: { name: 'p2', namespace: 'ns' }, spec: { node: 'n2' } },
    ];
    h.inf.addIndexer('node', (o) => (o.spec?.node ? [o.spec.node] : []));
    const running = h.start();
    await h.inf.waitForSync();
    const late: string[] = [];
    h.inf.addEventHandler({ onAdd: (o) => late.push(o.metadata.name) });
    expect(late.sort()).toEqual(['p1', 'p2']);
    expect(h.inf.byIndex('node', 'n2').map((o) => o.metadata.name)).toEqual(['p2']);
    expect(h.inf.lister.get('ns', 'p1')?.metadata.name).toBe('p1');
    expect(h.inf.lister.list('ns')).toHaveLength(2);
    h.ctl.abort();
    await running;
  });

  it('waitForSync rejects when its signal aborts first; run refuses a second start', async () => {
    const h = harness();
    h.lw.listFailures = 1;
    const ctl = new AbortController();
    const running = h.start();
    const waiting = h.inf.waitForSync(ctl.signal);
    ctl.abort(new Error('gave up'));
    await expect(waiting).rejects.toThrow('gave up');
    await expect(h.inf.run(h.ctl.signal)).rejects.toThrow(/already started/);
    h.ctl.abort();
    await running;
  });

  it('waitForCacheSync waits for every informer', async () => {
    const a = harness();
    const b = harness();
    b.lw.listFailures = 1;
    const ra = a.start();
    const rb = b.start();
    let synced = false;
    const all = waitForCacheSync(undefined, a.inf, b.inf).then(() => (synced = true));
    await flushMicrotasks();
    expect(a.inf.hasSynced()).toBe(true);
    expect(synced).toBe(false);
    await b.clock.advance(800);
    await all;
    expect(synced).toBe(true);
    a.ctl.abort();
    b.ctl.abort();
    await Promise.all([ra, rb]);
  });

  it('a watch that expires straight after every list backs off between relists instead of spinning', async () => {
    const h = harness();
    h.lw.watch = (o) => {
      const chan = new Chan<WatchEvent<Obj>>();
      h.lw.watches.push({ rv: o.resourceVersion, bookmarks: o.allowWatchBookmarks, chan });
      chan.push({ type: 'ERROR', error: new ExpiredError('too old'), object: {} });
      return chan;
    };
    const running = h.start();
    await flushMicrotasks();
    expect(h.lw.listCalls).toHaveLength(1);
    await h.clock.advance(800);
    expect(h.lw.listCalls).toHaveLength(2);
    await h.clock.advance(1599);
    expect(h.lw.listCalls).toHaveLength(2);
    await h.clock.advance(1);
    expect(h.lw.listCalls).toHaveLength(3);
    h.ctl.abort();
    await running;
  });

  it('after a watch that made progress, a 410 relists at once', async () => {
    const h = harness();
    const running = h.start();
    await h.inf.waitForSync();
    await flushMicrotasks();
    h.lw.last().push({ type: 'ADDED', object: obj('a', '11') });
    h.lw.last().push({ type: 'ERROR', error: new ExpiredError('too old'), object: {} });
    await flushMicrotasks();
    expect(h.lw.listCalls).toHaveLength(2);
    h.ctl.abort();
    await running;
  });
});
