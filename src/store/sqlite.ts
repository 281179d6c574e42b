import Database from 'better-sqlite3';
import type { Database as Db, Statement } from 'better-sqlite3';
import {
  AlreadyExistsError,
  assertNever,
  BadRequestError,
  ConflictError,
  ExpiredError,
  NotFoundError,
  StowageError,
  UnavailableError,
  toStowageError,
} from '../util/errors.js';
import { newLogger } from '../util/log.js';
import type { KeyValue, ListOptions, ListResult, Store, WatchEvent, Watcher, WatchOptions } from './store.js';

const log = newLogger('store/sqlite');

export interface SqliteStoreOptions {
  /** Database file, or ':memory:'. */
  readonly path: string;
  /** Revisions of history (watchable/listable) to keep; older log rows are compacted. Default 100_000. */
  readonly historyLimit?: number;
  /** Also run automatic compaction on this period (unref'd timer). Default: only piggy-backed on writes. */
  readonly compactIntervalMs?: number;
  /** How durable a commit is when acknowledged (see Synchronous). Default NORMAL. */
  readonly synchronous?: Synchronous;
}

/**
 * SQLite's `synchronous` level with the WAL journal. NORMAL: an acknowledged commit is in the WAL
 * (written to the OS, not fsync'd), so it survives the process being killed at any instant
 * (SIGKILL: test/store-sigkill.test.ts) but a power loss or kernel crash may roll the database
 * back to an earlier consistent commit. FULL: the WAL is fsync'd at every commit (as etcd does),
 * so an acknowledged write survives those too, at one fsync per group commit (`enqueue`): about
 * 15× fewer sequential writes per second at the store, less through the API where group commit
 * batches concurrent requests. The default is NORMAL: a process crash is the failure this
 * program is built to survive; a host that must survive power loss asks for FULL.
 */
export type Synchronous = 'NORMAL' | 'FULL';
const DEFAULT_SYNCHRONOUS: Synchronous = 'NORMAL';

export interface SqliteStore extends Store {
  /** Number of watchers currently registered (for tests and metrics). */
  watcherCount(): number;
}

/**
 * Opens (or creates) a SQLite-backed Store. Single-process: the revision counter lives in memory,
 * so two processes must never open the same file for writing.
 */
export function openSqliteStore(opts: SqliteStoreOptions): SqliteStore {
  return new SqliteKv(opts);
}

const DEFAULT_HISTORY = 100_000;
const REPLAY_CHUNK = 1_000;
// Long enough to outlast a previous process that is still exiting; short enough to fail clearly.
const LOCK_WAIT_MS = 2_000;
const PUT = 0;
const DEL = 1;

interface LogRow {
  rev: number;
  key: string;
  type: number;
  value: string | null;
  create_rev: number | null;
  prev_value: string | null;
  prev_create_rev: number | null;
  prev_mod_rev: number | null;
}

interface QueuedWrite {
  readonly op: 'create' | 'update' | 'delete';
  readonly key: string;
  readonly value: string | undefined;
  readonly expected: number | undefined;
  readonly resolve: (ev: WatchEvent) => void;
  readonly reject: (err: unknown) => void;
}

interface WatchEntry {
  readonly prefix: string;
  readonly opts: WatchOptions;
  /** False while the log replay is pending; live events are then picked up by the replay. */
  live: boolean;
  closed: boolean;
  lastDelivered: number;
}

// TEXT sorts before every BLOB in SQLite, so an empty blob is an upper bound above all keys.
const ABOVE_ALL_KEYS = Buffer.alloc(0);

/** Exclusive upper bound of the keys starting with `prefix` (keys compare as UTF-8 = code point order). */
function prefixEnd(prefix: string): string | Buffer {
  const cps = Array.from(prefix);
  while (cps.length > 0) {
    const last = cps.pop()!.codePointAt(0)!;
    let next = last + 1;
    if (next >= 0xd800 && next <= 0xdfff) next = 0xe000;
    if (next <= 0x10ffff) return cps.join('') + String.fromCodePoint(next);
  }
  return ABOVE_ALL_KEYS;
}

/** kv: current values. log: one row per write (the watch/history source), trimmed by compaction. meta: revision, compacted. */
const SCHEMA = `
  CREATE TABLE IF NOT EXISTS kv (
    key TEXT PRIMARY KEY, value TEXT NOT NULL, create_rev INTEGER NOT NULL, mod_rev INTEGER NOT NULL
  ) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS log (
    rev INTEGER PRIMARY KEY, key TEXT NOT NULL, type INTEGER NOT NULL, value TEXT, create_rev INTEGER,
    prev_value TEXT, prev_create_rev INTEGER, prev_mod_rev INTEGER
  );
  CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, num INTEGER NOT NULL) WITHOUT ROWID;
`;

/**
 * The revision counter lives in memory, so a second process writing the same file would reuse
 * revisions. An exclusive lock taken at open (held until close) makes that a clear error instead.
 */
function openExclusive(path: string, synchronous: Synchronous): Db {
  let db: Db | undefined;
  try {
    db = new Database(path, { timeout: LOCK_WAIT_MS });
    if (path !== ':memory:') {
      db.pragma('locking_mode = EXCLUSIVE');
      db.pragma('journal_mode = WAL');
      db.exec('BEGIN IMMEDIATE; COMMIT');
    }
    db.pragma(`synchronous = ${synchronous}`);
    db.exec(SCHEMA);
    return db;
  } catch (err) {
    db?.close();
    const busy = isSqliteError(err) && (err.code === 'SQLITE_BUSY' || err.code === 'SQLITE_LOCKED');
    const why = busy ? 'it is in use by another process' : err instanceof Error ? err.message : String(err);
    throw new UnavailableError(`cannot open store ${path}: ${why}`, { cause: err });
  }
}

function isSqliteError(err: unknown): err is Error & { code: string } {
  return err instanceof Error && typeof (err as { code?: unknown }).code === 'string';
}

/** SQLite failures (disk full, I/O) become Stowage errors here, once; our own typed errors pass through. */
function storeError(err: unknown): StowageError {
  if (err instanceof StowageError) return err;
  if (isSqliteError(err) && (err.code === 'SQLITE_BUSY' || err.code === 'SQLITE_LOCKED')) {
    return new UnavailableError(`store busy: ${err.message}`, { cause: err });
  }
  return toStowageError(err);
}

class SqliteKv implements SqliteStore {
  private readonly db: Db;
  private readonly historyLimit: number;
  private readonly compactBatch: number;
  private rev: number;
  private compacted: number;
  private closed = false;
  private readonly timer: NodeJS.Timeout | undefined;
  private readonly watchers = new Set<WatchEntry>();
  private readonly pending: WatchEvent[] = [];
  private dispatching = false;
  private readonly st: Record<
    | 'get'
    | 'insert'
    | 'upd'
    | 'del'
    | 'log'
    | 'listFrom'
    | 'listAfter'
    | 'count'
    | 'countAfter'
    | 'replay'
    | 'historic'
    | 'compact'
    | 'meta'
    | 'maxRev',
    Statement
  >;
  private readonly tx: {
    /** Applies queued writes in one transaction; a write refused by its own check fails alone. */
    batch: (writes: readonly QueuedWrite[]) => Array<WatchEvent | StowageError>;
    compact: (rev: number) => void;
  };
  /** Writes waiting for the next group commit (see `enqueue`). */
  private queue: QueuedWrite[] = [];
  private flushScheduled = false;

  constructor(o: SqliteStoreOptions) {
    this.historyLimit = Math.max(1, o.historyLimit ?? DEFAULT_HISTORY);
    // Compact in batches so the DELETE stays cheap and rare: ~1% of history, capped.
    this.compactBatch = Math.max(1, Math.min(1_000, Math.floor(this.historyLimit / 100)));
    const db = openExclusive(o.path, o.synchronous ?? DEFAULT_SYNCHRONOUS);
    this.db = db;
    const kvCols = 'key, value, create_rev AS createRevision, mod_rev AS modRevision';
    this.st = {
      get: db.prepare(`SELECT ${kvCols} FROM kv WHERE key = ?`),
      insert: db.prepare('INSERT INTO kv (key, value, create_rev, mod_rev) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING'),
      upd: db.prepare('UPDATE kv SET value = ?, mod_rev = ? WHERE key = ?'),
      del: db.prepare('DELETE FROM kv WHERE key = ?'),
      log: db.prepare(
        'INSERT INTO log (rev, key, type, value, create_rev, prev_value, prev_create_rev, prev_mod_rev) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      ),
      listFrom: db.prepare(`SELECT ${kvCols} FROM kv WHERE key >= ? AND key < ? ORDER BY key LIMIT ?`),
      listAfter: db.prepare(`SELECT ${kvCols} FROM kv WHERE key > ? AND key < ? ORDER BY key LIMIT ?`),
      count: db.prepare('SELECT COUNT(*) AS n FROM kv WHERE key >= ? AND key < ?'),
      countAfter: db.prepare('SELECT COUNT(*) AS n FROM kv WHERE key > ? AND key < ?'),
      replay: db.prepare('SELECT * FROM log WHERE rev > ? AND rev <= ? AND key >= ? AND key < ? ORDER BY rev LIMIT ?'),
      // State at revision R: keys untouched since R come from kv; for the others, the value before
      // their first change after R.
      historic: db.prepare(`
        WITH first AS (SELECT key, MIN(rev) AS rev FROM log WHERE rev > @rev AND key >= @lo AND key < @hi GROUP BY key)
        SELECT ${kvCols} FROM kv WHERE key >= @lo AND key < @hi AND key NOT IN (SELECT key FROM first)
        UNION ALL
        SELECT l.key AS key, l.prev_value AS value, l.prev_create_rev AS createRevision, l.prev_mod_rev AS modRevision
          FROM first f JOIN log l ON l.rev = f.rev WHERE l.prev_value IS NOT NULL
        ORDER BY key`),
      compact: db.prepare('DELETE FROM log WHERE rev <= ?'),
      meta: db.prepare(
        'INSERT INTO meta (name, num) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET num = excluded.num',
      ),
      maxRev: db.prepare('SELECT MAX(rev) AS n FROM log'),
    };
    const meta = new Map(
      (db.prepare('SELECT name, num FROM meta').all() as Array<{ name: string; num: number }>).map((r) => [
        r.name,
        r.num,
      ]),
    );
    const maxLogged = (this.st.maxRev.get() as { n: number | null }).n ?? 0;
    // The revision is persisted only with compaction; otherwise the newest log row carries it.
    this.rev = Math.max(meta.get('revision') ?? 0, maxLogged);
    this.compacted = meta.get('compacted') ?? 0;
    this.tx = this.buildTransactions();
    if (o.compactIntervalMs !== undefined && o.compactIntervalMs > 0) {
      this.timer = setInterval(() => this.autoCompact(0), o.compactIntervalMs);
      this.timer.unref();
    }
  }

  private buildTransactions(): SqliteKv['tx'] {
    const { db, st } = this;
    // Each apply checks before it writes, so a refused write (exists, missing, stale) leaves nothing
    // behind and the batch goes on; any other failure aborts the whole transaction.
    const apply = (w: QueuedWrite): WatchEvent => {
      const rev = this.rev + 1;
      switch (w.op) {
        case 'create': {
          if (st.insert.run(w.key, w.value, rev, rev).changes === 0)
            throw new AlreadyExistsError(`key ${w.key} already exists`);
          st.log.run(rev, w.key, PUT, w.value, rev, null, null, null);
          this.rev = rev;
          return {
            type: 'PUT',
            kv: { key: w.key, value: w.value!, createRevision: rev, modRevision: rev },
            revision: rev,
          };
        }
        case 'update': {
          const prev = this.current(w.key, w.expected);
          st.upd.run(w.value, rev, w.key);
          st.log.run(rev, w.key, PUT, w.value, prev.createRevision, prev.value, prev.createRevision, prev.modRevision);
          this.rev = rev;
          return {
            type: 'PUT',
            kv: { key: w.key, value: w.value!, createRevision: prev.createRevision, modRevision: rev },
            prev,
            revision: rev,
          };
        }
        case 'delete': {
          const prev = this.current(w.key, w.expected);
          st.del.run(w.key);
          st.log.run(rev, w.key, DEL, null, null, prev.value, prev.createRevision, prev.modRevision);
          this.rev = rev;
          return { type: 'DELETE', kv: { ...prev, modRevision: rev }, prev, revision: rev };
        }
        default:
          return assertNever(w.op);
      }
    };
    const batch = db.transaction((writes: readonly QueuedWrite[]) =>
      writes.map((w) => {
        try {
          return apply(w);
        } catch (err) {
          if (err instanceof StowageError) return err;
          throw err;
        }
      }),
    );
    return {
      batch: (writes) => {
        const before = this.rev;
        try {
          return batch(writes);
        } catch (err) {
          this.rev = before; // rolled back: the revisions handed out inside were never committed
          throw err;
        }
      },
      compact: db.transaction((rev: number) => {
        st.compact.run(rev);
        st.meta.run('compacted', rev);
        st.meta.run('revision', this.rev);
      }),
    };
  }

  private current(key: string, expected: number | undefined): KeyValue {
    const prev = this.st.get.get(key) as KeyValue | undefined;
    if (!prev) throw new NotFoundError(`key ${key} not found`);
    if (expected !== undefined && prev.modRevision !== expected) {
      throw new ConflictError(`key ${key}: modRevision is ${prev.modRevision}, expected ${expected}`);
    }
    return prev;
  }

  private assertOpen(): void {
    if (this.closed) throw new UnavailableError('store is closed');
  }

  readonly synchronousWatch = true;

  currentRevision(): number {
    return this.rev;
  }

  compactedRevision(): number {
    return this.compacted;
  }

  watcherCount(): number {
    return this.watchers.size;
  }

  async get(key: string): Promise<KeyValue | undefined> {
    this.assertOpen();
    return this.guard(() => this.st.get.get(key) as KeyValue | undefined);
  }

  async count(prefix: string): Promise<number> {
    this.assertOpen();
    return this.guard(() => (this.st.count.get(prefix, prefixEnd(prefix)) as { n: number }).n);
  }

  async list(prefix: string, opts: ListOptions = {}): Promise<ListResult> {
    this.assertOpen();
    return this.guard(() => this.listNow(prefix, opts));
  }

  private listNow(prefix: string, opts: ListOptions): ListResult {
    const limit = opts.limit !== undefined && opts.limit > 0 ? opts.limit : 0;
    const hi = prefixEnd(prefix);
    const after = opts.startAfter !== undefined && opts.startAfter >= prefix ? opts.startAfter : undefined;
    const at = opts.revision !== undefined && opts.revision > 0 ? opts.revision : this.rev;
    if (at > this.rev) throw new BadRequestError(`revision ${at} is in the future (current revision ${this.rev})`);
    if (at < this.compacted)
      throw new ExpiredError(`revision ${at} has been compacted (compacted revision ${this.compacted})`);
    if (at < this.rev) return this.listHistoric(prefix, hi, after, limit, at);

    const rows = (
      after === undefined
        ? this.st.listFrom.all(prefix, hi, limit ? limit + 1 : -1)
        : this.st.listAfter.all(after, hi, limit ? limit + 1 : -1)
    ) as KeyValue[];
    if (!limit || rows.length <= limit) return { items: rows, revision: at };
    rows.length = limit;
    const continueKey = rows[limit - 1]!.key;
    const remaining = (this.st.countAfter.get(continueKey, hi) as { n: number }).n;
    return { items: rows, revision: at, continueKey, remaining };
  }

  private listHistoric(
    prefix: string,
    hi: string | Buffer,
    after: string | undefined,
    limit: number,
    at: number,
  ): ListResult {
    let rows = this.st.historic.all({ rev: at, lo: prefix, hi }) as KeyValue[];
    if (after !== undefined) rows = rows.filter((r) => r.key > after);
    if (!limit || rows.length <= limit) return { items: rows, revision: at };
    const items = rows.slice(0, limit);
    return { items, revision: at, continueKey: items[limit - 1]!.key, remaining: rows.length - limit };
  }

  async create(key: string, value: string): Promise<KeyValue> {
    return (await this.enqueue({ op: 'create', key, value, expected: undefined })).kv;
  }

  async update(key: string, value: string, expectedModRevision?: number): Promise<KeyValue> {
    return (await this.enqueue({ op: 'update', key, value, expected: expectedModRevision })).kv;
  }

  async delete(key: string, expectedModRevision?: number): Promise<KeyValue> {
    return (await this.enqueue({ op: 'delete', key, value: undefined, expected: expectedModRevision })).prev!;
  }

  /**
   * Group commit: writes issued in the same turn of the event loop (typically the requests parsed
   * in one I/O poll) share one SQLite transaction, committed in setImmediate. Each write still
   * resolves only after its transaction committed and its watch event was emitted, in order.
   */
  private enqueue(w: Omit<QueuedWrite, 'resolve' | 'reject'>): Promise<WatchEvent> {
    this.assertOpen();
    return new Promise<WatchEvent>((resolve, reject) => {
      this.queue.push({ ...w, resolve, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.flushScheduled = false;
    const writes = this.queue;
    if (writes.length === 0) return;
    this.queue = [];
    if (this.closed) {
      for (const w of writes) w.reject(new UnavailableError('store is closed'));
      return;
    }
    let results: Array<WatchEvent | StowageError>;
    try {
      results = this.tx.batch(writes);
    } catch (err) {
      const e = storeError(err);
      for (const w of writes) w.reject(e);
      return;
    }
    this.autoCompact(this.compactBatch);
    for (const r of results) if (!(r instanceof StowageError)) this.emit(r);
    writes.forEach((w, i) => {
      const r = results[i]!;
      if (r instanceof StowageError) w.reject(r);
      else w.resolve(r);
    });
  }

  async compact(revision: number): Promise<void> {
    this.assertOpen();
    if (revision > this.rev)
      throw new BadRequestError(`cannot compact revision ${revision}: current revision is ${this.rev}`);
    if (revision <= this.compacted) return;
    this.guard(() => this.tx.compact(revision));
    this.compacted = revision;
  }

  private guard<T>(fn: () => T): T {
    try {
      return fn();
    } catch (err) {
      throw storeError(err);
    }
  }

  private autoCompact(slack: number): void {
    if (this.closed) return;
    const target = this.rev - this.historyLimit;
    if (target - this.compacted < Math.max(1, slack)) return;
    try {
      this.tx.compact(target);
      this.compacted = target;
    } catch (err) {
      // The write that triggered us has committed; a failed compaction is retried on a later write.
      log.warn('automatic compaction failed', { target, error: String(err) });
    }
  }

  watch(prefix: string, opts: WatchOptions): Watcher {
    const entry: WatchEntry = { prefix, opts, live: false, closed: false, lastDelivered: 0 };
    const after = opts.afterRevision ?? this.rev;
    if (this.closed) {
      entry.closed = true;
      queueMicrotask(() => opts.onError?.(new UnavailableError('store is closed')));
    } else if (after < this.compacted) {
      entry.closed = true;
      const err = new ExpiredError(`revision ${after} has been compacted (compacted revision ${this.compacted})`);
      queueMicrotask(() => opts.onError?.(err));
    } else {
      this.watchers.add(entry);
      // Replay asynchronously so the caller holds the Watcher before the first event arrives.
      queueMicrotask(() => this.replay(entry, after));
    }
    return {
      close: () => {
        entry.closed = true;
        this.watchers.delete(entry);
      },
    };
  }

  private replay(w: WatchEntry, after: number): void {
    if (w.closed || this.closed) return;
    if (after < this.compacted) {
      w.closed = true;
      this.watchers.delete(w);
      w.opts.onError?.(new ExpiredError(`revision ${after} has been compacted (compacted revision ${this.compacted})`));
      return;
    }
    const hi = prefixEnd(w.prefix);
    let from = after;
    // Handlers may write while we replay; loop until the log is drained up to the current revision.
    while (from < this.rev && !w.closed && !this.closed) {
      const rows = this.st.replay.all(from, this.rev, w.prefix, hi, REPLAY_CHUNK) as LogRow[];
      if (rows.length === 0) break;
      for (const r of rows) {
        if (w.closed) return;
        deliver(w, rowToEvent(r));
      }
      from = rows[rows.length - 1]!.rev;
    }
    w.lastDelivered = Math.max(this.rev, after);
    w.live = true;
  }

  /** Deliver in commit order even when a handler writes re-entrantly. */
  private emit(ev: WatchEvent): void {
    if (this.watchers.size === 0) return;
    this.pending.push(ev);
    if (this.dispatching) return;
    this.dispatching = true;
    try {
      for (let i = 0; i < this.pending.length; i++) {
        const e = this.pending[i]!;
        for (const w of this.watchers) {
          if (w.live && !w.closed && e.revision > w.lastDelivered && e.kv.key.startsWith(w.prefix)) {
            w.lastDelivered = e.revision;
            deliver(w, e);
          }
        }
      }
    } finally {
      this.pending.length = 0;
      this.dispatching = false;
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    // Writes already accepted are committed, not dropped.
    this.flush();
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    for (const w of this.watchers) w.closed = true;
    this.watchers.clear();
    this.db.close();
  }
}

function deliver(w: WatchEntry, ev: WatchEvent): void {
  try {
    w.opts.onEvent(ev);
  } catch (err) {
    // A faulty handler must not break the writer or the other watchers; its watch stays open.
    log.error('watch handler threw', { prefix: w.prefix, revision: ev.revision, error: String(err) });
  }
}

function rowToEvent(r: LogRow): WatchEvent {
  const prev: KeyValue | undefined =
    r.prev_value === null
      ? undefined
      : { key: r.key, value: r.prev_value, createRevision: r.prev_create_rev!, modRevision: r.prev_mod_rev! };
  if (r.type === DEL) {
    return { type: 'DELETE', kv: { ...prev!, modRevision: r.rev }, prev, revision: r.rev };
  }
  const kv: KeyValue = { key: r.key, value: r.value!, createRevision: r.create_rev!, modRevision: r.rev };
  return prev ? { type: 'PUT', kv, prev, revision: r.rev } : { type: 'PUT', kv, revision: r.rev };
}
