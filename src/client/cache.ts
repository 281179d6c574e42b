import { metaNamespaceKey } from '../kube/keys.js';
import type { KubeObjectLike } from './rest.js';

export { metaNamespaceKey, splitKey } from '../kube/keys.js';

export type IndexFunc<T> = (obj: T) => readonly string[];

/** Built in to every cache: objects by namespace ('' for cluster-scoped). */
export const NAMESPACE_INDEX = 'namespace';

/**
 * Read access to cached objects. The objects are the cache's own: callers MUST NOT mutate them.
 * Code that wants to change one takes `structuredClone(obj)` first.
 */
export interface Lister<T> {
  /** A cluster-scoped object by name. */
  get(name: string): T | undefined;
  /** A namespaced object. */
  get(namespace: string, name: string): T | undefined;
  getByKey(key: string): T | undefined;
  /** Every object, or those of one namespace. Fresh array, shared objects. */
  list(namespace?: string): T[];
  byIndex(indexName: string, value: string): T[];
}

export interface ReplaceResult<T> {
  readonly added: T[];
  readonly updated: Array<[old: T, cur: T]>;
  readonly deleted: Array<[key: string, old: T]>;
}

/**
 * The informer's local cache: objects by key plus incrementally maintained indexes. Synchronous,
 * so every method is atomic on Node's single thread.
 */
export class ObjectCache<T extends KubeObjectLike> implements Lister<T> {
  private readonly items = new Map<string, T>();
  private readonly indexers = new Map<string, IndexFunc<T>>();
  private readonly indices = new Map<string, Map<string, Set<string>>>();

  constructor() {
    this.addIndexer(NAMESPACE_INDEX, (o) => [o.metadata?.namespace ?? '']);
  }

  /** Registers an index and builds it over the current contents. Names are unique. */
  addIndexer(name: string, fn: IndexFunc<T>): void {
    if (this.indexers.has(name)) throw new Error(`indexer ${name} already exists`);
    this.indexers.set(name, fn);
    this.indices.set(name, new Map());
    for (const [key, obj] of this.items) this.indexOne(name, fn, key, obj);
  }

  get(a: string, b?: string): T | undefined {
    return this.items.get(b === undefined ? a : `${a}/${b}`);
  }

  getByKey(key: string): T | undefined {
    return this.items.get(key);
  }

  list(namespace?: string): T[] {
    if (namespace === undefined) return [...this.items.values()];
    return this.byIndex(NAMESPACE_INDEX, namespace);
  }

  keys(): string[] {
    return [...this.items.keys()];
  }

  size(): number {
    return this.items.size;
  }

  byIndex(indexName: string, value: string): T[] {
    const index = this.indices.get(indexName);
    if (!index) throw new Error(`no indexer named ${indexName}`);
    const keys = index.get(value);
    if (!keys) return [];
    const out: T[] = [];
    for (const k of keys) {
      const o = this.items.get(k);
      if (o) out.push(o);
    }
    return out;
  }

  /** Inserts or replaces; returns the previous object. */
  upsert(obj: T): T | undefined {
    const key = metaNamespaceKey(obj);
    const old = this.items.get(key);
    if (old) this.unindex(key, old);
    this.items.set(key, obj);
    for (const [name, fn] of this.indexers) this.indexOne(name, fn, key, obj);
    return old;
  }

  /** Removes by key; returns what was cached. */
  delete(key: string): T | undefined {
    const old = this.items.get(key);
    if (!old) return undefined;
    this.unindex(key, old);
    this.items.delete(key);
    return old;
  }

  /** Makes the contents exactly `objs` (a relist) and reports what changed. */
  replace(objs: readonly T[]): ReplaceResult<T> {
    const result: ReplaceResult<T> = { added: [], updated: [], deleted: [] };
    const seen = new Set<string>();
    for (const obj of objs) {
      const key = metaNamespaceKey(obj);
      seen.add(key);
      const old = this.upsert(obj);
      if (old) result.updated.push([old, obj]);
      else result.added.push(obj);
    }
    for (const key of [...this.items.keys()]) {
      if (seen.has(key)) continue;
      const old = this.delete(key);
      if (old) result.deleted.push([key, old]);
    }
    return result;
  }

  private indexOne(name: string, fn: IndexFunc<T>, key: string, obj: T): void {
    const index = this.indices.get(name);
    if (!index) return;
    for (const v of fn(obj)) {
      let set = index.get(v);
      if (!set) index.set(v, (set = new Set()));
      set.add(key);
    }
  }

  private unindex(key: string, obj: T): void {
    for (const [name, fn] of this.indexers) {
      const index = this.indices.get(name);
      if (!index) continue;
      for (const v of fn(obj)) {
        const set = index.get(v);
        if (!set) continue;
        set.delete(key);
        if (set.size === 0) index.delete(v);
      }
    }
  }
}
