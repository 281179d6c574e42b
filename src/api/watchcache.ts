import type { KeyValue, Store, Watcher } from '../store/store.js';
import { ExpiredError, TimeoutError } from '../util/errors.js';
import { newLogger } from '../util/log.js';
import type { KubeObject } from './resources/types.js';

const log = newLogger('api/watchcache');
// kube-apiserver's cacher waits up to 3 s for its cache to reach a requested revision (waitUntilFreshAndBlock).
export const WAIT_FOR_FRESH_MS = 3_000;

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** One object as the cache holds it: parsed (do not mutate) and its serialized JSON. */
export interface CachedObject {
  readonly key: string;
  readonly obj: KubeObject;
  readonly json: string;
  readonly rev: number;
}

export interface CacheEvent {
  readonly type: WatchEventType;
  readonly key: string;
  /** New state (for DELETED: the last state, with the delete's resourceVersion). */
  readonly cur: CachedObject;
  /** Previous state (undefined for ADDED). */
  readonly prev?: CachedObject;
  readonly rev: number;
}

/** The values a secondary index files an object under (none: not indexed). */
export type IndexFunc = (obj: KubeObject) => readonly string[];

function addKey(m: Map<string, Set<string>>, value: string, key: string): void {
  let keys = m.get(value);
  if (!keys) m.set(value, (keys = new Set()));
  keys.add(key);
}

function removeKey(m: Map<string, Set<string>>, value: string, key: string): void {
  const keys = m.get(value);
  if (keys?.delete(key) && keys.size === 0) m.delete(value);
}

/** Turns a stored object into what this cache serves (a custom resource's other version: conversion None). */
export type ObjectTransform = (obj: KubeObject) => void;

export interface CacheWatch {
  close(): void;
}

/**
 * A cached object whose parsed form can be dropped once a newer state replaces it: the history
 * then keeps only the JSON of old states (a parsed object is several times its JSON's size) and
 * parses it again the rare time a resumed watch replays it.
 */
class StoredObject implements CachedObject {
  private parsed: KubeObject | undefined;

  constructor(
    readonly key: string,
    obj: KubeObject,
    readonly json: string,
    readonly rev: number,
  ) {
    this.parsed = obj;
  }

  get obj(): KubeObject {
    return this.parsed ?? (JSON.parse(this.json) as KubeObject);
  }

  /** No longer the current state: keep the JSON only. */
  release(): void {
    this.parsed = undefined;
  }
}

function release(c: CachedObject): void {
  if (c instanceof StoredObject) c.release();
}

/** Decodes a stored value into an object whose metadata.resourceVersion is the modRevision. */
export function decodeStored(kv: KeyValue, rev = kv.modRevision, transform?: ObjectTransform): CachedObject {
  const obj = JSON.parse(kv.value) as KubeObject;
  transform?.(obj);
  obj.metadata.resourceVersion = String(rev);
  return new StoredObject(kv.key, obj, JSON.stringify(obj), rev);
}

/**
 * The API server's in-memory copy of one resource, fed by the store's watch: lists and watches
 * are served from here. Because the store notifies synchronously after each commit, the cache is
 * never behind the store between two turns of the event loop.
 *
 * History: the last `historyLimit` events are kept so a client can resume a watch from an older
 * resourceVersion; older than that → ExpiredError (HTTP 410) and the client relists.
 */
export class WatchCache {
  private readonly items = new Map<string, CachedObject>();
  private readonly history: CacheEvent[] = [];
  private historyHead = 0; // index of the oldest retained event in `history` (ring via shift-free head)
  /** Every event with rev > historyStartRev is in `history`. */
  private historyStartRev = 0;
  /** Each client watch: its event callback and what ends it when the cache must relist. */
  private readonly watchers = new Map<(ev: CacheEvent) => void, () => void>();
  private storeWatcher: Watcher | undefined;
  private sortedKeys: string[] | undefined;
  /** Every event of this prefix up to here has been applied (the list's revision, then each event's). */
  private appliedRev = 0;
  private synced = false;
  private readonly waiters = new Set<() => void>();
  /** Secondary indexes by name: value → keys of the cached objects with that value. */
  private readonly indexes = new Map<
    string,
    { readonly valuesOf: IndexFunc; readonly keys: Map<string, Set<string>> }
  >();

  constructor(
    private readonly store: Store,
    readonly prefix: string,
    private readonly historyLimit = 20_000,
    private readonly transform?: ObjectTransform,
  ) {}

  async start(): Promise<void> {
    const res = await this.store.list(this.prefix);
    this.items.clear();
    this.sortedKeys = undefined;
    for (const kv of res.items) this.items.set(kv.key, decodeStored(kv, kv.modRevision, this.transform));
    for (const ix of this.indexes.values()) this.rebuild(ix);
    this.historyStartRev = res.revision;
    this.appliedRev = res.revision;
    this.synced = true;
    this.storeWatcher = this.store.watch(this.prefix, {
      afterRevision: res.revision,
      onError: (err) => {
        // The store's watch fell behind a compaction (etcd unreachable for longer than the
        // compaction interval): relist, and let every client watch resume or get 410 from the new history.
        log.error('watch cache lost its store watch; relisting', { prefix: this.prefix, error: err.message });
        this.synced = false;
        this.storeWatcher?.close();
        this.history.length = 0;
        this.historyHead = 0;
        this.historyStartRev = Number.MAX_SAFE_INTEGER; // until relisted, every resume is 410
        const ended = [...this.watchers.values()];
        this.watchers.clear();
        for (const end of ended) end();
        void this.restart();
      },
      onProgress: (revision) => {
        if (revision <= this.appliedRev) return;
        this.appliedRev = revision;
        for (const wake of [...this.waiters]) wake();
      },
      onEvent: (ev) => {
        if (ev.revision > this.appliedRev) this.appliedRev = ev.revision;
        const prev = this.items.get(ev.kv.key);
        let cev: CacheEvent;
        if (ev.type === 'DELETE') {
          if (!prev) return;
          this.items.delete(ev.kv.key);
          this.reindex(prev, undefined);
          const last = decodeStored(ev.kv, ev.revision, this.transform);
          cev = { type: 'DELETED', key: ev.kv.key, cur: last, prev, rev: ev.revision };
          this.sortedKeys = undefined;
        } else {
          const cur = decodeStored(ev.kv, ev.kv.modRevision, this.transform);
          this.items.set(ev.kv.key, cur);
          this.reindex(prev, cur);
          if (!prev) this.sortedKeys = undefined;
          cev = prev
            ? { type: 'MODIFIED', key: ev.kv.key, cur, prev, rev: ev.revision }
            : { type: 'ADDED', key: ev.kv.key, cur, rev: ev.revision };
        }
        this.record(cev);
        for (const w of this.watchers.keys()) {
          try {
            w(cev);
          } catch {
            // A broken watcher must not stop delivery to the others; it closes itself on write errors.
          }
        }
        // Superseded states stay in the history as JSON only.
        if (cev.prev) release(cev.prev);
        if (cev.type === 'DELETED') release(cev.cur);
        for (const wake of [...this.waiters]) wake();
      },
    });
  }

  private async restart(): Promise<void> {
    for (let attempt = 1; !this.stopped; attempt++) {
      try {
        await this.start();
        return;
      } catch (e) {
        log.warn('watch cache relist failed', { prefix: this.prefix, attempt, error: String(e) });
        await new Promise((r) => setTimeout(r, Math.min(200 * attempt, 5_000)));
      }
    }
  }

  private stopped = false;

  stop(): void {
    this.stopped = true;
    this.storeWatcher?.close();
    // Client watches end (a kind no longer served, or the server stopping).
    const ended = [...this.watchers.values()];
    this.watchers.clear();
    for (const end of ended) end();
    for (const wake of [...this.waiters]) wake();
  }

  /** The cache holds the store's content and its watch is running. */
  isSynced(): boolean {
    return this.synced && !this.stopped;
  }

  /**
   * Resolves true once `cond()` holds, re-checked after every applied event; false after
   * `timeoutMs`. With a synchronous store the condition already holds after a write.
   */
  async waitUntil(cond: () => boolean, timeoutMs = WAIT_FOR_FRESH_MS): Promise<boolean> {
    if (cond()) return true;
    return new Promise<boolean>((resolve) => {
      const done = (ok: boolean): void => {
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve(ok);
      };
      const check = (): void => {
        if (cond()) done(true);
        else if (this.stopped) done(false);
      };
      const timer = setTimeout(() => done(false), timeoutMs);
      this.waiters.add(check);
    });
  }

  /**
   * kube-apiserver's consistent read from cache: with a store whose watch lags its writes (etcd),
   * wait until the cache has applied everything up to the store's current revision. False when
   * that did not happen within the timeout (the caller serves what it has, as kube falls back).
   */
  async waitFresh(timeoutMs = WAIT_FOR_FRESH_MS): Promise<boolean> {
    if (this.store.synchronousWatch || !this.store.requestProgress) return true;
    const rev = await this.store.requestProgress();
    return this.waitForRevision(rev, timeoutMs);
  }

  /** Resolves true once every event of this resource up to `rev` is applied (false after the timeout). */
  waitForRevision(rev: number, timeoutMs = WAIT_FOR_FRESH_MS): Promise<boolean> {
    return this.waitUntil(() => this.revision() >= rev, timeoutMs);
  }

  private record(ev: CacheEvent): void {
    this.history.push(ev);
    if (this.history.length - this.historyHead > this.historyLimit) {
      this.historyStartRev = this.history[this.historyHead]!.rev;
      this.historyHead++;
      if (this.historyHead > 4096) {
        this.history.splice(0, this.historyHead);
        this.historyHead = 0;
      }
    }
  }

  /**
   * The revision the cache reflects every commit up to: the store's own when its watch is
   * synchronous (SQLite), else the last one applied from the watch (etcd).
   */
  revision(): number {
    return this.store.synchronousWatch ? this.store.currentRevision() : this.appliedRev;
  }

  get(key: string): CachedObject | undefined {
    return this.items.get(key);
  }

  size(): number {
    return this.items.size;
  }

  /** Objects whose key starts with `keyPrefix`, in key order. */
  list(keyPrefix = this.prefix): CachedObject[] {
    if (!this.sortedKeys) this.sortedKeys = [...this.items.keys()].sort();
    const keys = this.sortedKeys;
    if (keyPrefix === this.prefix) return keys.map((k) => this.items.get(k)!);
    let lo = 0;
    let hi = keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (keys[mid]! < keyPrefix) lo = mid + 1;
      else hi = mid;
    }
    const out: CachedObject[] = [];
    for (let i = lo; i < keys.length && keys[i]!.startsWith(keyPrefix); i++) out.push(this.items.get(keys[i]!)!);
    return out;
  }

  /**
   * Adds a secondary index (kube's cacher indexers, such as pods by spec.nodeName), kept in step
   * with every event; a second call with the same name keeps the first.
   */
  addIndex(name: string, valuesOf: IndexFunc): void {
    if (this.indexes.has(name)) return;
    const ix = { valuesOf, keys: new Map<string, Set<string>>() };
    this.rebuild(ix);
    this.indexes.set(name, ix);
  }

  /** The cached objects the index `name` files under `value` (none for an unknown index). */
  byIndex(name: string, value: string): CachedObject[] {
    const keys = this.indexes.get(name)?.keys.get(value);
    return keys ? [...keys].map((k) => this.items.get(k)!) : [];
  }

  private rebuild(ix: { readonly valuesOf: IndexFunc; readonly keys: Map<string, Set<string>> }): void {
    ix.keys.clear();
    for (const c of this.items.values()) for (const v of ix.valuesOf(c.obj)) addKey(ix.keys, v, c.key);
  }

  private reindex(prev: CachedObject | undefined, cur: CachedObject | undefined): void {
    for (const ix of this.indexes.values()) {
      if (prev) for (const v of ix.valuesOf(prev.obj)) removeKey(ix.keys, v, prev.key);
      if (cur) for (const v of ix.valuesOf(cur.obj)) addKey(ix.keys, v, cur.key);
    }
  }

  /** Unsorted iteration, for scans where order does not matter. */
  values(): IterableIterator<CachedObject> {
    return this.items.values();
  }

  /**
   * Delivers every event after `fromRev` (replayed from history), then live ones.
   * `fromRev` older than the retained history → ExpiredError; newer than the store → TimeoutError.
   * `onTerminated` runs if the cache loses its store watch and relists (the client must re-watch).
   */
  watch(fromRev: number, onEvent: (ev: CacheEvent) => void, onTerminated: () => void = () => {}): CacheWatch {
    const current = this.revision();
    if (fromRev > current) throw new TimeoutError(`Too large resource version: ${fromRev}, current: ${current}`);
    if (fromRev < this.historyStartRev) {
      throw new ExpiredError(`too old resource version: ${fromRev} (${this.historyStartRev})`);
    }
    // Replay: binary search the first event with rev > fromRev.
    let lo = this.historyHead;
    let hi = this.history.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.history[mid]!.rev <= fromRev) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < this.history.length; i++) onEvent(this.history[i]!);
    this.watchers.set(onEvent, onTerminated);
    return { close: () => void this.watchers.delete(onEvent) };
  }
}
