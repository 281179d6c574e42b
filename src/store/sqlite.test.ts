import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { BadRequestError, ExpiredError, UnavailableError } from '../util/errors.js';
import { newEventSink, runStoreContract } from './contract.test-kit.js';
import { openSqliteStore } from './sqlite.js';

const dir = mkdtempSync(join(tmpdir(), 'stowage-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const nextFile = (): string => join(dir, `db-${++n}.sqlite`);

runStoreContract({ name: 'sqlite :memory:', newStore: async () => openSqliteStore({ path: ':memory:' }) });
runStoreContract({ name: 'sqlite file', newStore: async () => openSqliteStore({ path: nextFile() }) });

describe('sqlite store', () => {
  it('keeps data, revision and compacted revision across reopen', async () => {
    const path = nextFile();
    const a = openSqliteStore({ path });
    await a.create('/r/a', '1');
    await a.create('/r/b', '2');
    await a.update('/r/a', '3');
    await a.compact(2);
    await a.delete('/r/b');
    await a.close();

    const b = openSqliteStore({ path });
    try {
      expect(b.currentRevision()).toBe(4);
      expect(b.compactedRevision()).toBe(2);
      expect((await b.list('/r/')).items).toEqual([{ key: '/r/a', value: '3', createRevision: 1, modRevision: 3 }]);
      expect((await b.create('/r/c', 'x')).modRevision).toBe(5);
      const sink = newEventSink();
      b.watch('/r/', { afterRevision: 2, onEvent: sink.onEvent });
      expect((await sink.waitFor(3)).map((e) => [e.type, e.kv.key, e.revision])).toEqual([
        ['PUT', '/r/a', 3],
        ['DELETE', '/r/b', 4],
        ['PUT', '/r/c', 5],
      ]);
    } finally {
      await b.close();
    }
  });

  it('keeps the revision across reopen when the whole log was compacted', async () => {
    const path = nextFile();
    const a = openSqliteStore({ path });
    await a.create('/r/a', '1');
    await a.create('/r/b', '2');
    await a.compact(2);
    await a.close();
    const b = openSqliteStore({ path });
    expect(b.currentRevision()).toBe(2);
    expect((await b.create('/r/c', '3')).modRevision).toBe(3);
    await b.close();
  });

  it('compacts automatically to the last historyLimit revisions', async () => {
    const s = openSqliteStore({ path: ':memory:', historyLimit: 5 });
    for (let i = 0; i < 20; i++) await s.create(`/a/${i}`, 'v');
    expect(s.compactedRevision()).toBe(15);
    await expect(s.list('/a/', { revision: 14 })).rejects.toBeInstanceOf(ExpiredError);
    expect((await s.list('/a/', { revision: 15 })).items).toHaveLength(15);
    expect(await s.count('/a/')).toBe(20);
    await s.close();
  });

  it('also compacts on the compactIntervalMs timer', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      const s = openSqliteStore({ path: ':memory:', historyLimit: 1_000, compactIntervalMs: 60_000 });
      for (let i = 0; i < 1_005; i++) await s.create(`/a/${i}`, 'v');
      expect(s.compactedRevision()).toBe(0); // below the per-write batch threshold
      vi.advanceTimersByTime(60_000);
      expect(s.compactedRevision()).toBe(5);
      await s.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it('rejects a list at a future revision and compaction past the current revision', async () => {
    const s = openSqliteStore({ path: ':memory:' });
    await s.create('/a', '1');
    await expect(s.list('/', { revision: 5 })).rejects.toBeInstanceOf(BadRequestError);
    await expect(s.compact(5)).rejects.toBeInstanceOf(BadRequestError);
    await s.close();
  });

  it('matches keys with non-ASCII prefixes exactly', async () => {
    const s = openSqliteStore({ path: ':memory:' });
    for (const k of ['/ü/1', '/ü1', '/ý/1', '/\u{10FFFF}/a', '/\u{10FFFF}']) await s.create(k, 'v');
    expect((await s.list('/ü/')).items.map((i) => i.key)).toEqual(['/ü/1']);
    expect((await s.list('/\u{10FFFF}')).items.map((i) => i.key)).toEqual(['/\u{10FFFF}', '/\u{10FFFF}/a']);
    expect(await s.count('')).toBe(5);
    await s.close();
  });

  it('drops watchers on close and rejects later calls', async () => {
    const s = openSqliteStore({ path: ':memory:' });
    s.watch('/', { onEvent: () => {} });
    expect(s.watcherCount()).toBe(1);
    await s.close();
    expect(s.watcherCount()).toBe(0);
    await expect(s.get('/a')).rejects.toThrow(/closed/);
  });
});

describe('sqlite store group commit', () => {
  it('commits writes issued together in one batch; a refused write fails alone and takes no revision', async () => {
    const s = openSqliteStore({ path: ':memory:' });
    await s.create('/g/a', '1');
    const seen: Array<[string, number]> = [];
    s.watch('/g/', { onEvent: (ev) => seen.push([ev.kv.key, ev.revision]) });
    await Promise.resolve();
    const results = await Promise.allSettled([
      s.create('/g/b', '2'),
      s.update('/g/a', 'x', 99), // stale modRevision
      s.create('/g/a', 'dup'), // exists
      s.update('/g/a', '3', 1),
      s.delete('/g/missing'),
      s.create('/g/c', '4'),
    ]);
    expect(results.map((r) => r.status)).toEqual([
      'fulfilled',
      'rejected',
      'rejected',
      'fulfilled',
      'rejected',
      'fulfilled',
    ]);
    expect(
      results.map((r) =>
        r.status === 'rejected' ? (r.reason as Error).name : (r.value as { modRevision: number }).modRevision,
      ),
    ).toEqual([2, 'ConflictError', 'AlreadyExistsError', 3, 'NotFoundError', 4]);
    expect(s.currentRevision()).toBe(4);
    expect(seen).toEqual([
      ['/g/b', 2],
      ['/g/a', 3],
      ['/g/c', 4],
    ]);
    expect((await s.get('/g/a'))?.value).toBe('3');
    await s.close();
  });

  it('rolls the whole batch back when SQLite itself fails, handing out no revision', async () => {
    const s = openSqliteStore({ path: ':memory:' });
    await s.create('/f/a', '1');
    const results = await Promise.allSettled([
      s.create('/f/b', '2'),
      s.create('/f/c', null as unknown as string), // NOT NULL constraint: a failure of SQLite, not a refusal
    ]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(s.currentRevision()).toBe(1);
    expect(await s.get('/f/b')).toBeUndefined();
    // The store goes on with the next revision.
    expect((await s.create('/f/b', '2')).modRevision).toBe(2);
    await s.close();
  });

  it('commits accepted writes on close instead of dropping them', async () => {
    const path = nextFile();
    const a = openSqliteStore({ path });
    const pending = a.create('/c/a', '1');
    await a.close();
    expect((await pending).modRevision).toBe(1);
    const b = openSqliteStore({ path });
    expect((await b.get('/c/a'))?.value).toBe('1');
    await b.close();
  });
});

describe('sqlite store file locking', () => {
  it('refuses a second open of the same file while the first is open', async () => {
    const path = nextFile();
    const a = openSqliteStore({ path });
    await a.create('/a', '1');
    expect(() => openSqliteStore({ path })).toThrow(/in use by another process/);
    await a.close();
    const b = openSqliteStore({ path });
    expect(b.currentRevision()).toBe(1);
    await b.close();
  });

  it('reports an unopenable path as Unavailable', () => {
    expect(() => openSqliteStore({ path: join(dir, 'missing', 'db.sqlite') })).toThrow(UnavailableError);
  });
});
