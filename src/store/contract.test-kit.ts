/**
 * The Store contract, runnable against every implementation (hono's common.case.test style):
 *
 *   runStoreContract({ name: 'sqlite :memory:', newStore: async () => openSqliteStore({ path: ':memory:' }) });
 *
 * `skip` names a test (its exact title) and why this implementation cannot pass it. Revisions are
 * asserted relative to the store's revision when the test began (etcd's is shared by every prefix).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { AlreadyExistsError, ConflictError, ExpiredError, NotFoundError } from '../util/errors.js';
import type { Store, WatchEvent, Watcher } from './store.js';

export interface StoreContractOptions {
  readonly name: string;
  readonly newStore: () => Promise<Store>;
  readonly skip?: ReadonlyArray<{ readonly test: string; readonly reason: string }>;
}

/** Collects events; `next(n)` resolves once n events have arrived (no sleeps). */
export interface EventSink {
  readonly events: WatchEvent[];
  readonly errors: Error[];
  readonly onEvent: (ev: WatchEvent) => void;
  readonly onError: (err: Error) => void;
  waitFor(n: number): Promise<WatchEvent[]>;
  waitForError(): Promise<Error>;
}

export function newEventSink(): EventSink {
  const events: WatchEvent[] = [];
  const errors: Error[] = [];
  let wake: () => void = () => {};
  const changed = (): Promise<void> => new Promise((r) => (wake = r));
  return {
    events,
    errors,
    onEvent: (ev) => {
      events.push(ev);
      wake();
    },
    onError: (err) => {
      errors.push(err);
      wake();
    },
    async waitFor(n) {
      while (events.length < n) await changed();
      return events.slice(0, n);
    },
    async waitForError() {
      while (errors.length === 0) await changed();
      return errors[0]!;
    },
  };
}

/** A microtask-and-macrotask boundary: lets queued replays run without waiting on wall time. */
const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

const summary = (evs: readonly WatchEvent[]) =>
  evs.map((e) => ({ type: e.type, key: e.kv.key, value: e.kv.value, rev: e.revision, prev: e.prev?.value }));

export function runStoreContract(o: StoreContractOptions): void {
  const skips = new Map((o.skip ?? []).map((s) => [s.test, s.reason]));
  const open: Store[] = [];
  const watchers: Watcher[] = [];
  const newStore = async (): Promise<Store> => {
    const s = await o.newStore();
    open.push(s);
    return s;
  };
  const watch = (s: Store, prefix: string, afterRevision?: number): EventSink & { w: Watcher } => {
    const sink = newEventSink();
    const w = s.watch(prefix, { afterRevision, onEvent: sink.onEvent, onError: sink.onError });
    watchers.push(w);
    return { ...sink, w };
  };
  const test = (title: string, fn: () => Promise<void>): void => {
    const reason = skips.get(title);
    if (reason !== undefined) it.skip(`${title} (skipped: ${reason})`, fn);
    else it(title, fn);
  };

  describe(`Store contract: ${o.name}`, () => {
    afterEach(async () => {
      for (const w of watchers.splice(0)) w.close();
      for (const s of open.splice(0)) await s.close();
    });

    describe('writes and revisions', () => {
      test('an empty store is at revision 0', async () => {
        const s = await newStore();
        expect(s.currentRevision()).toBe(0);
        expect(await s.get('/a')).toBeUndefined();
      });

      test('revisions increase by one per write across keys', async () => {
        const s = await newStore();
        const r = s.currentRevision();
        const a = await s.create('/k/a', '1');
        const b = await s.create('/k/b', '2');
        const a2 = await s.update('/k/a', '3');
        const d = await s.delete('/k/b');
        expect([a.modRevision, b.modRevision, a2.modRevision]).toEqual([r + 1, r + 2, r + 3]);
        expect(a2.createRevision).toBe(r + 1);
        expect(d).toMatchObject({ key: '/k/b', value: '2', modRevision: r + 2, createRevision: r + 2 });
        expect(s.currentRevision()).toBe(r + 4);
        expect(await s.get('/k/a')).toEqual({ key: '/k/a', value: '3', createRevision: r + 1, modRevision: r + 3 });
      });

      test('create of an existing key fails and does not bump the revision', async () => {
        const s = await newStore();
        const a = await s.create('/k/a', '1');
        await expect(s.create('/k/a', '2')).rejects.toBeInstanceOf(AlreadyExistsError);
        expect(s.currentRevision()).toBe(a.modRevision);
        expect((await s.get('/k/a'))?.value).toBe('1');
      });

      test('a key re-created after delete gets a new createRevision', async () => {
        const s = await newStore();
        const r = s.currentRevision();
        await s.create('/k/a', '1');
        await s.delete('/k/a');
        const again = await s.create('/k/a', '2');
        expect(again).toEqual({ key: '/k/a', value: '2', createRevision: r + 3, modRevision: r + 3 });
      });

      test('update with a stale modRevision conflicts', async () => {
        const s = await newStore();
        const a = await s.create('/k/a', '1');
        await s.update('/k/a', '2', a.modRevision);
        await expect(s.update('/k/a', '3', a.modRevision)).rejects.toBeInstanceOf(ConflictError);
        await expect(s.delete('/k/a', a.modRevision)).rejects.toBeInstanceOf(ConflictError);
        expect(s.currentRevision()).toBe(a.modRevision + 1);
        expect((await s.get('/k/a'))?.value).toBe('2');
      });

      test('of two concurrent updaters exactly one wins', async () => {
        const s = await newStore();
        const a = await s.create('/k/a', '0');
        const results = await Promise.allSettled([
          s.update('/k/a', 'x', a.modRevision),
          s.update('/k/a', 'y', a.modRevision),
        ]);
        const won = results.filter((r) => r.status === 'fulfilled');
        const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
        expect(won).toHaveLength(1);
        expect(lost).toHaveLength(1);
        expect(lost[0]!.reason).toBeInstanceOf(ConflictError);
      });

      test('update and delete of a missing key are NotFound', async () => {
        const s = await newStore();
        const r = s.currentRevision();
        await expect(s.update('/k/none', 'v')).rejects.toBeInstanceOf(NotFoundError);
        await expect(s.delete('/k/none')).rejects.toBeInstanceOf(NotFoundError);
        expect(s.currentRevision()).toBe(r);
      });

      test('delete returns the deleted value', async () => {
        const s = await newStore();
        const c = await s.create('/k/a', 'v1');
        const u = await s.update('/k/a', 'v2');
        const d = await s.delete('/k/a', u.modRevision);
        expect(d).toEqual({ key: '/k/a', value: 'v2', createRevision: c.modRevision, modRevision: c.modRevision + 1 });
        expect(await s.get('/k/a')).toBeUndefined();
      });
    });

    describe('list', () => {
      test('lists in key order', async () => {
        const s = await newStore();
        const base = s.currentRevision();
        for (const k of ['/x/c', '/x/a', '/x/b']) await s.create(k, k);
        const r = await s.list('/x/');
        expect(r.items.map((i) => i.key)).toEqual(['/x/a', '/x/b', '/x/c']);
        expect(r.revision).toBe(base + 3);
        expect(r.continueKey).toBeUndefined();
      });

      test('a prefix does not match its siblings', async () => {
        const s = await newStore();
        for (const k of ['/a/b', '/a/b/1', '/a/bc/1', '/x/1', '/xy/1', '/x']) await s.create(k, 'v');
        expect((await s.list('/x/')).items.map((i) => i.key)).toEqual(['/x/1']);
        expect((await s.list('/a/b/')).items.map((i) => i.key)).toEqual(['/a/b/1']);
        expect(await s.count('/x/')).toBe(1);
        expect(await s.count('/a/')).toBe(3);
        expect(await s.count('')).toBe(6);
      });

      test('limit and startAfter page through many keys', async () => {
        const s = await newStore();
        const keys = Array.from({ length: 57 }, (_, i) => `/p/${String(i).padStart(3, '0')}`);
        for (const k of [...keys].reverse()) await s.create(k, k);
        await s.create('/q/0', 'other');
        const seen: string[] = [];
        let startAfter: string | undefined;
        for (let page = 0; page < 20; page++) {
          const r = await s.list('/p/', { limit: 10, startAfter });
          seen.push(...r.items.map((i) => i.key));
          if (r.continueKey === undefined) {
            expect(r.remaining).toBeFalsy();
            break;
          }
          expect(r.continueKey).toBe(r.items[r.items.length - 1]!.key);
          expect(r.remaining).toBe(keys.length - seen.length);
          startAfter = r.continueKey;
        }
        expect(seen).toEqual(keys);
      });

      test('a page that ends exactly at the last key has no continue', async () => {
        const s = await newStore();
        for (const k of ['/p/a', '/p/b']) await s.create(k, k);
        const r = await s.list('/p/', { limit: 2 });
        expect(r.items).toHaveLength(2);
        expect(r.continueKey).toBeUndefined();
      });

      test('list at an older revision returns the state as of that revision', async () => {
        const s = await newStore();
        const r = s.currentRevision();
        await s.create('/h/a', 'a1'); // 1
        await s.create('/h/b', 'b1'); // 2
        await s.create('/other', 'o'); // 3
        const at = s.currentRevision();
        await s.update('/h/a', 'a2'); // 4
        await s.delete('/h/b'); // 5
        await s.create('/h/c', 'c1'); // 6
        const old = await s.list('/h/', { revision: at });
        expect(old.revision).toBe(at);
        expect(old.items).toEqual([
          { key: '/h/a', value: 'a1', createRevision: r + 1, modRevision: r + 1 },
          { key: '/h/b', value: 'b1', createRevision: r + 2, modRevision: r + 2 },
        ]);
        const paged = await s.list('/h/', { revision: r + 4, limit: 1, startAfter: '/h/a' });
        expect(paged.items.map((i) => [i.key, i.value])).toEqual([['/h/b', 'b1']]);
        expect(paged.continueKey).toBeUndefined();
        const now = await s.list('/h/');
        expect(now.items.map((i) => [i.key, i.value])).toEqual([
          ['/h/a', 'a2'],
          ['/h/c', 'c1'],
        ]);
      });
    });

    describe('watch', () => {
      test('live events arrive in order with previous values', async () => {
        const s = await newStore();
        const r = s.currentRevision();
        const sink = watch(s, '/w/');
        await tick();
        await s.create('/w/a', '1');
        await s.create('/other/a', 'x');
        await s.update('/w/a', '2');
        await s.delete('/w/a');
        expect(summary(await sink.waitFor(3))).toEqual([
          { type: 'PUT', key: '/w/a', value: '1', rev: r + 1, prev: undefined },
          { type: 'PUT', key: '/w/a', value: '2', rev: r + 3, prev: '1' },
          { type: 'DELETE', key: '/w/a', value: '2', rev: r + 4, prev: '2' },
        ]);
        expect(sink.events).toHaveLength(3);
      });

      test('delete events carry the deleted value', async () => {
        const s = await newStore();
        const c = await s.create('/w/a', 'gone');
        const r = c.modRevision;
        const sink = watch(s, '/w/');
        await tick();
        await s.delete('/w/a');
        const [ev] = await sink.waitFor(1);
        expect(ev).toEqual({
          type: 'DELETE',
          kv: { key: '/w/a', value: 'gone', createRevision: r, modRevision: r + 1 },
          prev: { key: '/w/a', value: 'gone', createRevision: r, modRevision: r },
          revision: r + 1,
        });
      });

      test('a watch from a past revision replays then continues without gaps or duplicates', async () => {
        const s = await newStore();
        const r = s.currentRevision();
        for (let i = 1; i <= 5; i++) await s.create(`/w/${i}`, `v${i}`);
        const sink = watch(s, '/w/', r + 2);
        // Writes after watch() but before the replay has run must appear exactly once.
        await s.create('/w/6', 'v6');
        await tick();
        await s.create('/w/7', 'v7');
        await s.update('/w/1', 'v1b');
        const evs = await sink.waitFor(6);
        expect(evs.map((e) => e.revision - r)).toEqual([3, 4, 5, 6, 7, 8]);
        expect(evs[5]!.prev?.value).toBe('v1');
        await s.create('/w/9', 'v9');
        await sink.waitFor(7);
        expect(sink.events.map((e) => e.revision - r)).toEqual([3, 4, 5, 6, 7, 8, 9]);
      });

      test('a watch without afterRevision sees only future events', async () => {
        const s = await newStore();
        await s.create('/w/old', 'x');
        const sink = watch(s, '/w/');
        await s.create('/w/new', 'y');
        const evs = await sink.waitFor(1);
        expect(evs.map((e) => e.kv.key)).toEqual(['/w/new']);
      });

      test('close() stops events', async () => {
        const s = await newStore();
        const sink = watch(s, '/w/');
        const other = watch(s, '/w/');
        await tick();
        await s.create('/w/a', '1');
        await sink.waitFor(1);
        sink.w.close();
        sink.w.close();
        await s.create('/w/b', '2');
        await other.waitFor(2);
        expect(sink.events.map((e) => e.kv.key)).toEqual(['/w/a']);
      });

      test('a throwing handler breaks neither the writer nor other watchers', async () => {
        const s = await newStore();
        watchers.push(
          s.watch('/w/', {
            onEvent: () => {
              throw new Error('boom');
            },
          }),
        );
        const sink = watch(s, '/w/');
        await tick();
        await expect(s.create('/w/a', '1')).resolves.toMatchObject({ modRevision: s.currentRevision() + 1 });
        await s.create('/w/b', '2');
        expect((await sink.waitFor(2)).map((e) => e.kv.key)).toEqual(['/w/a', '/w/b']);
      });

      test('a handler that writes sees events in commit order', async () => {
        const s = await newStore();
        const r = s.currentRevision();
        const sink = watch(s, '/w/');
        watchers.push(
          s.watch('/w/', {
            onEvent: (e) => {
              if (e.kv.key === '/w/a') void s.create('/w/echo', 'e');
            },
          }),
        );
        await tick();
        await s.create('/w/a', '1');
        await s.create('/w/b', '2');
        const evs = await sink.waitFor(3);
        expect(evs.map((e) => e.revision - r)).toEqual([1, 2, 3]);
      });
    });

    describe('compaction', () => {
      test('watch and list from a compacted revision are Expired; current data is kept', async () => {
        const s = await newStore();
        const r = s.currentRevision();
        for (let i = 1; i <= 6; i++) await s.create(`/c/${i}`, `v${i}`);
        await s.update('/c/1', 'v1b'); // 7
        await s.compact(r + 5);
        expect(s.compactedRevision()).toBe(r + 5);
        await expect(s.list('/c/', { revision: r + 4 })).rejects.toBeInstanceOf(ExpiredError);
        const expired = watch(s, '/c/', r + 3);
        expect(await expired.waitForError()).toBeInstanceOf(ExpiredError);
        expect(expired.events).toHaveLength(0);
        const ok = watch(s, '/c/', r + 5);
        expect((await ok.waitFor(2)).map((e) => e.revision - r)).toEqual([6, 7]);
        const atCompacted = await s.list('/c/', { revision: r + 5 });
        expect(atCompacted.items.map((i) => i.value)).toEqual(['v1', 'v2', 'v3', 'v4', 'v5']);
        const now = await s.list('/c/');
        expect(now.items.map((i) => i.value)).toEqual(['v1b', 'v2', 'v3', 'v4', 'v5', 'v6']);
        expect(s.currentRevision()).toBe(r + 7);
      });

      test('compacting everything keeps the revision and the data', async () => {
        const s = await newStore();
        await s.create('/c/a', '1');
        const b = await s.create('/c/b', '2');
        await s.compact(b.modRevision);
        expect(s.currentRevision()).toBe(b.modRevision);
        expect((await s.get('/c/b'))?.value).toBe('2');
        const next = await s.create('/c/c', '3');
        expect(next.modRevision).toBe(b.modRevision + 1);
      });
    });
  });
}
