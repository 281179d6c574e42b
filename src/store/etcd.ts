/**
 * The Store on etcd v3 (kube-apiserver's storage backend), for running several API servers on one
 * cluster. Keys follow kube-apiserver's layout (see etcd/keys.ts); values are the objects' JSON;
 * resourceVersion = etcd's mod revision. Writes are single transactions comparing the key's mod
 * revision (0 = absent), so optimistic concurrency holds across every API server sharing the etcd.
 */
import {
  AlreadyExistsError,
  BadRequestError,
  ConflictError,
  ExpiredError,
  NotFoundError,
  type StowageError,
  UnavailableError,
} from '../util/errors.js';
import { newLogger } from '../util/log.js';
import {
  EtcdClient,
  prefixRangeEnd,
  type EtcdClientOptions,
  type EtcdEvent,
  type EtcdKeyValue,
  type EtcdWatch,
} from './etcd/client.js';
import { startCompactor, type Compactor } from './etcd/compactor.js';
import { fromEtcdKey, toEtcdKey } from './etcd/keys.js';
import type { KeyValue, ListOptions, ListResult, Store, WatchEvent, WatchOptions, Watcher } from './store.js';

export interface EtcdStoreOptions extends EtcdClientOptions {
  /** kube-apiserver's --etcd-prefix. */
  readonly prefix?: string;
  /** Period of compaction (kube-apiserver: --etcd-compaction-interval, 5 min); 0 = never. */
  readonly compactIntervalMs?: number;
  /** Delay before re-opening a watch stream that etcd closed (not for compaction). */
  readonly watchRetryMs?: number;
}

export type EtcdStore = Store;

const log = newLogger('store/etcd');
export const DEFAULT_ETCD_PREFIX = '/registry';
const HEALTH_KEY = 'health'; // the key kube-apiserver's etcd health check reads
const HEALTH_TIMEOUT_MS = 2_000;
const DEFAULT_COMPACT_INTERVAL_MS = 5 * 60_000; // kube-apiserver's --etcd-compaction-interval default

/** Connects and reads the current revision; rejects with UnavailableError when etcd does not answer. */
export async function openEtcdStore(o: EtcdStoreOptions): Promise<EtcdStore> {
  const client = new EtcdClient(o);
  try {
    const r = await client.range({ key: o.prefix ?? DEFAULT_ETCD_PREFIX, countOnly: true });
    return new EtcdBackedStore(client, o, r.revision);
  } catch (e) {
    client.close();
    throw e;
  }
}

const toStore = (storeKey: string, kv: EtcdKeyValue): KeyValue => ({
  key: storeKey,
  value: kv.value,
  createRevision: kv.createRevision,
  modRevision: kv.modRevision,
});

class EtcdBackedStore implements EtcdStore {
  readonly synchronousWatch = false;
  private readonly prefix: string;
  private rev: number;
  private compacted = 0;
  private closed = false;
  private readonly watches = new Set<StoreWatch>();
  private readonly compactor: Compactor | undefined;

  constructor(
    private readonly client: EtcdClient,
    private readonly o: EtcdStoreOptions,
    rev: number,
  ) {
    this.prefix = o.prefix ?? DEFAULT_ETCD_PREFIX;
    this.rev = rev;
    const interval = o.compactIntervalMs ?? DEFAULT_COMPACT_INTERVAL_MS;
    if (interval > 0)
      this.compactor = startCompactor({ client, intervalMs: interval, onCompacted: (r) => this.sawCompaction(r) });
  }

  currentRevision(): number {
    return this.rev;
  }

  compactedRevision(): number {
    return this.compacted;
  }

  /**
   * kube-apiserver's etcd readiness check: a linearizable read (it needs quorum) answered within
   * HEALTH_TIMEOUT_MS; and every watch stream established.
   */
  async unavailable(): Promise<string | undefined> {
    if (this.closed) return 'store closed';
    for (const w of this.watches) if (!w.connected()) return 'etcd watch not established';
    try {
      await this.call(() => this.client.range({ key: HEALTH_KEY, countOnly: true }, HEALTH_TIMEOUT_MS));
      return undefined;
    } catch (e) {
      return `etcd: ${e instanceof Error ? e.message : String(e)}`;
    }
  }

  /** Records a revision etcd reported (header or event): the store is at least there. */
  saw(rev: number): void {
    if (rev > this.rev) this.rev = rev;
  }

  /** A write of this store committed at `rev`: each watch of its prefix holds back requested progress until it saw it. */
  private wrote(key: string, rev: number): void {
    for (const w of this.watches) w.wrote(key, rev);
  }

  sawCompaction(rev: number): void {
    if (rev > this.compacted) this.compacted = rev;
  }

  private call<T>(f: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new UnavailableError('store is closed'));
    return f();
  }

  async get(key: string): Promise<KeyValue | undefined> {
    const r = await this.call(() => this.client.range({ key: toEtcdKey(this.prefix, key) }));
    this.saw(r.revision);
    const kv = r.kvs[0];
    return kv ? toStore(key, kv) : undefined;
  }

  async list(prefix: string, opts: ListOptions = {}): Promise<ListResult> {
    const etcdPrefix = toEtcdKey(this.prefix, prefix);
    const start = opts.startAfter !== undefined ? `${toEtcdKey(this.prefix, opts.startAfter)}\0` : etcdPrefix;
    if (opts.revision !== undefined && opts.revision > this.rev) {
      throw new BadRequestError(`revision ${opts.revision} is newer than the store (${this.rev})`);
    }
    let r;
    try {
      r = await this.call(() =>
        this.client.range({
          key: start,
          rangeEnd: prefixRangeEnd(etcdPrefix),
          limit: opts.limit ?? 0,
          revision: opts.revision ?? 0,
        }),
      );
    } catch (e) {
      if (e instanceof ExpiredError && opts.revision !== undefined) this.sawCompaction(opts.revision + 1);
      throw e;
    }
    this.saw(r.revision);
    const items = r.kvs.map((kv) => toStore(fromEtcdKey(prefix, etcdPrefix, kv.key), kv));
    const revision = opts.revision ?? r.revision;
    if (!r.more || items.length === 0) return { items, revision };
    return { items, revision, continueKey: items[items.length - 1]!.key, remaining: r.count - items.length };
  }

  async count(prefix: string): Promise<number> {
    const etcdPrefix = toEtcdKey(this.prefix, prefix);
    const r = await this.call(() =>
      this.client.range({ key: etcdPrefix, rangeEnd: prefixRangeEnd(etcdPrefix), countOnly: true }),
    );
    this.saw(r.revision);
    return r.count;
  }

  async create(key: string, value: string): Promise<KeyValue> {
    const k = toEtcdKey(this.prefix, key);
    const r = await this.call(() =>
      this.client.txn([{ key: k, op: 'EQUAL', modRevision: 0 }], [{ kind: 'put', key: k, value }], []),
    );
    this.saw(r.revision);
    if (!r.succeeded) throw new AlreadyExistsError(`key ${key} already exists`);
    this.wrote(key, r.revision);
    return { key, value, createRevision: r.revision, modRevision: r.revision };
  }

  async update(key: string, value: string, expectedModRevision?: number): Promise<KeyValue> {
    const k = toEtcdKey(this.prefix, key);
    const cmp =
      expectedModRevision === undefined
        ? { key: k, op: 'GREATER' as const, modRevision: 0 }
        : { key: k, op: 'EQUAL' as const, modRevision: expectedModRevision };
    const r = await this.call(() =>
      this.client.txn([cmp], [{ kind: 'put', key: k, value }], [{ kind: 'range', key: k }]),
    );
    this.saw(r.revision);
    if (!r.succeeded) throw this.refusal(key, r.results[0]?.[0], expectedModRevision);
    this.wrote(key, r.revision);
    const prev = r.results[0]?.[0];
    return { key, value, createRevision: prev?.createRevision ?? r.revision, modRevision: r.revision };
  }

  async delete(key: string, expectedModRevision?: number): Promise<KeyValue> {
    const k = toEtcdKey(this.prefix, key);
    const cmp =
      expectedModRevision === undefined
        ? { key: k, op: 'GREATER' as const, modRevision: 0 }
        : { key: k, op: 'EQUAL' as const, modRevision: expectedModRevision };
    const r = await this.call(() => this.client.txn([cmp], [{ kind: 'delete', key: k }], [{ kind: 'range', key: k }]));
    this.saw(r.revision);
    if (!r.succeeded) throw this.refusal(key, r.results[0]?.[0], expectedModRevision);
    const prev = r.results[0]?.[0];
    if (!prev) throw new NotFoundError(`key ${key} not found`);
    this.wrote(key, r.revision);
    return toStore(key, prev);
  }

  private refusal(key: string, current: EtcdKeyValue | undefined, expected: number | undefined): StowageError {
    if (!current) return new NotFoundError(`key ${key} not found`);
    return new ConflictError(`key ${key} is at revision ${current.modRevision}, not ${expected}`);
  }

  watch(prefix: string, opts: WatchOptions): Watcher {
    const w = new StoreWatch(
      this,
      this.client,
      prefix,
      toEtcdKey(this.prefix, prefix),
      opts,
      this.o.watchRetryMs ?? 200,
    );
    this.watches.add(w);
    w.onClose = () => this.watches.delete(w);
    if (this.closed) w.close();
    return w;
  }

  async requestProgress(): Promise<number> {
    const r = await this.call(() => this.client.range({ key: HEALTH_KEY, countOnly: true }));
    this.saw(r.revision);
    for (const w of this.watches) w.requestProgress();
    return r.revision;
  }

  async compact(revision: number): Promise<void> {
    if (revision > this.rev) throw new BadRequestError(`cannot compact to ${revision}: the store is at ${this.rev}`);
    try {
      await this.call(() => this.client.compact(revision));
    } catch (e) {
      if (!(e instanceof ExpiredError)) throw e; // already compacted at or past it: nothing to do
    }
    this.sawCompaction(revision);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.compactor?.stop();
    for (const w of [...this.watches]) w.close();
    this.client.close();
  }
}

/**
 * One Store watch on one etcd watch stream. A stream that breaks (etcd restarted, connection lost)
 * is re-opened from the last delivered revision, so the consumer misses and repeats nothing; only
 * a compaction past that revision ends the watch, with ExpiredError, as kube-apiserver's does.
 */
class StoreWatch implements Watcher {
  onClose: () => void = () => {};
  /** The revision of the last event delivered: a re-opened stream repeats none before it. */
  private lastEvent: number;
  /** Where a re-opened stream starts after: the last event or ordered progress notification. */
  private resumeAfter: number;
  /** The newest revision this store wrote under the prefix: requested progress past it waits for its event. */
  private ownWrite = 0;
  /** A requested progress notification held until the events of this store's own writes arrived. */
  private heldProgress = 0;
  /** The last progress told to the consumer. */
  private told = 0;
  private stream: EtcdWatch | undefined;
  private retry: NodeJS.Timeout | undefined;
  private open = false;
  private closed = false;

  constructor(
    private readonly store: EtcdBackedStore,
    private readonly client: EtcdClient,
    private readonly storePrefix: string,
    private readonly etcdPrefix: string,
    private readonly opts: WatchOptions,
    private readonly retryMs: number,
  ) {
    this.lastEvent = opts.afterRevision ?? store.currentRevision();
    this.resumeAfter = this.lastEvent;
    this.connect();
  }

  connected(): boolean {
    return this.open;
  }

  requestProgress(): void {
    this.stream?.requestProgress();
  }

  wrote(key: string, rev: number): void {
    if (key.startsWith(this.storePrefix) && rev > this.ownWrite) this.ownWrite = rev;
  }

  private connect(): void {
    this.retry = undefined;
    if (this.closed) return;
    this.stream = this.client.watch(
      { key: this.etcdPrefix, rangeEnd: prefixRangeEnd(this.etcdPrefix), startRevision: this.resumeAfter + 1 },
      {
        onEvents: (revision, events) => {
          this.open = true;
          this.store.saw(revision);
          for (const ev of events) this.deliver(ev);
          this.releaseHeld();
        },
        onProgress: (revision, requested) => {
          if (this.closed) return;
          if (!requested) {
            if (revision > this.resumeAfter) this.resumeAfter = revision;
            this.tell(revision);
            return;
          }
          // Requested progress may overtake queued events (etcd issue 15220): never let it drop
          // an event, and tell it only once this store's own writes under the prefix were seen,
          // so a read after a write through this server sees the write.
          if (revision > this.heldProgress) this.heldProgress = revision;
          this.releaseHeld();
        },
        onEnd: (err, compactRevision) => {
          this.open = false;
          if (this.closed) return;
          if (err instanceof ExpiredError) {
            if (compactRevision !== undefined) this.store.sawCompaction(compactRevision);
            this.close();
            this.opts.onError?.(err);
            return;
          }
          log.debug(`watch ${this.storePrefix} from ${this.resumeAfter + 1} broke (${err.message}); re-opening`);
          this.retry = setTimeout(() => this.connect(), this.retryMs);
        },
      },
    );
  }

  private releaseHeld(): void {
    if (this.heldProgress === 0 || this.lastEvent < this.ownWrite) return;
    const rev = this.heldProgress;
    this.heldProgress = 0;
    this.tell(rev);
  }

  private tell(revision: number): void {
    if (revision <= this.told || revision <= this.lastEvent) return;
    this.told = revision;
    this.opts.onProgress?.(revision);
  }

  private deliver(ev: EtcdEvent): void {
    const revision = ev.kv.modRevision;
    if (revision <= this.lastEvent || this.closed) return;
    this.lastEvent = revision;
    if (revision > this.resumeAfter) this.resumeAfter = revision;
    this.store.saw(revision);
    const key = fromEtcdKey(this.storePrefix, this.etcdPrefix, ev.kv.key);
    const prev = ev.prev ? toStore(key, ev.prev) : undefined;
    const kv: KeyValue =
      ev.type === 'DELETE'
        ? { key, value: prev?.value ?? '', createRevision: prev?.createRevision ?? 0, modRevision: revision }
        : toStore(key, ev.kv);
    const out: WatchEvent = { type: ev.type, kv, ...(prev ? { prev } : {}), revision };
    try {
      this.opts.onEvent(out);
    } catch (e) {
      log.error('watch handler threw', { prefix: this.storePrefix, revision, error: String(e) });
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.open = false;
    if (this.retry) clearTimeout(this.retry);
    this.stream?.cancel();
    this.onClose();
  }
}
