import { realClock, type BackoffPolicy, type Clock } from '../util/backoff.js';
import { toStowageError } from '../util/errors.js';
import { newLogger, type Logger } from '../util/log.js';
import { ObjectCache, metaNamespaceKey, type IndexFunc, type Lister } from './cache.js';
import type { KindMap, KindName } from './kinds.js';
import { Reflector, listerWatcherFor, type ListerWatcher, type ReflectorSink } from './reflector.js';
import type { KubeObjectLike, RestClient, SelectorOptions } from './rest.js';

/**
 * Delivered to onDelete when a relist shows an object gone whose deletion event was missed: `obj`
 * is the last state the cache knew (client-go's DeletedFinalStateUnknown).
 */
export interface Tombstone<T> {
  readonly tombstone: true;
  readonly key: string;
  readonly obj: T;
}

export function isTombstone<T>(x: T | Tombstone<T>): x is Tombstone<T> {
  return typeof x === 'object' && x !== null && (x as { tombstone?: unknown }).tombstone === true;
}

/** The object itself, or the tombstone's last known state. */
export function objectOf<T>(x: T | Tombstone<T>): T {
  return isTombstone(x) ? x.obj : x;
}

/**
 * Handlers run synchronously, in event order, after the cache is updated. They should only
 * enqueue keys; objects passed in are the cache's own and must not be mutated.
 */
export interface EventHandler<T> {
  onAdd?(obj: T): void;
  /** Also called with (obj, obj) on every resync and for objects still present after a relist. */
  onUpdate?(oldObj: T, newObj: T): void;
  onDelete?(obj: T | Tombstone<T>): void;
}

export interface Informer<T> {
  /** Handlers added after start first get onAdd for every cached object. */
  addEventHandler(h: EventHandler<T>): void;
  addIndexer(name: string, fn: IndexFunc<T>): void;
  byIndex(name: string, value: string): T[];
  readonly lister: Lister<T>;
  /** True once the first list has been delivered. */
  hasSynced(): boolean;
  /** Resolves once synced; rejects with the signal's reason on abort. */
  waitForSync(signal?: AbortSignal): Promise<void>;
  lastSyncResourceVersion(): string;
  /** Runs list+watch (and resync) until `signal` aborts. Call once. */
  run(signal: AbortSignal): Promise<void>;
}

export interface InformerOptions<T> {
  readonly lw: ListerWatcher<T>;
  readonly name?: string;
  /** Period of onUpdate(obj, obj) re-delivery for every cached object; 0 = never. */
  readonly resyncMs?: number;
  readonly clock?: Clock;
  readonly log?: Logger;
  readonly backoff?: BackoffPolicy;
  readonly pageSize?: number;
  readonly watchTimeoutSeconds?: () => number;
  /**
   * Applied to every object before it enters the cache (client-go's SetTransform), e.g.
   * stripManagedFields. It may change the object it is given (a fresh decode), and returns it.
   */
  readonly transform?: (obj: T) => T;
}

/**
 * client-go's TransformStripManagedFields, which kube-controller-manager and kube-scheduler set on
 * their informer factories: controllers never read managedFields, and a cached object without
 * them is about half the size. An update sent from such a copy keeps the live object's
 * managedFields (the API server keeps them when a write carries none).
 */
export function stripManagedFields<T extends KubeObjectLike>(obj: T): T {
  const m = obj.metadata as { managedFields?: unknown } | undefined;
  if (m && m.managedFields !== undefined) delete m.managedFields;
  return obj;
}

export function newInformer<T extends KubeObjectLike>(o: InformerOptions<T>): Informer<T> {
  return new SharedInformer<T>(o);
}

/** An informer over one kind of the API, e.g. pods on one node: `{ fieldSelector: 'spec.nodeName=n1' }`. */
export function informerFor<K extends KindName>(
  client: RestClient,
  kind: K,
  o: Omit<InformerOptions<KindMap[K]>, 'lw'> & SelectorOptions & { namespace?: string } = {},
): Informer<KindMap[K]> {
  const { namespace, labelSelector, fieldSelector, ...rest } = o;
  const lw = listerWatcherFor(client.resource(kind), { namespace, labelSelector, fieldSelector });
  return newInformer<KindMap[K]>({ name: kind, ...rest, lw });
}

class SharedInformer<T extends KubeObjectLike> implements Informer<T>, ReflectorSink<T> {
  private readonly cache = new ObjectCache<T>();
  private readonly handlers: EventHandler<T>[] = [];
  private readonly reflector: Reflector<T>;
  private readonly clock: Clock;
  private readonly log: Logger;
  private synced = false;
  private started = false;
  private readonly syncWaiters: Array<() => void> = [];

  constructor(private readonly o: InformerOptions<T>) {
    this.clock = o.clock ?? realClock;
    this.log = o.log ?? newLogger(`informer/${o.name ?? 'objects'}`);
    this.reflector = new Reflector<T>({
      lw: o.lw,
      sink: this,
      name: o.name,
      clock: this.clock,
      log: this.log,
      backoff: o.backoff,
      pageSize: o.pageSize,
      watchTimeoutSeconds: o.watchTimeoutSeconds,
    });
  }

  get lister(): Lister<T> {
    return this.cache;
  }

  addEventHandler(h: EventHandler<T>): void {
    this.handlers.push(h);
    for (const obj of this.cache.list()) this.call(h, 'onAdd', () => h.onAdd?.(obj));
  }

  addIndexer(name: string, fn: IndexFunc<T>): void {
    this.cache.addIndexer(name, fn);
  }

  byIndex(name: string, value: string): T[] {
    return this.cache.byIndex(name, value);
  }

  hasSynced(): boolean {
    return this.synced;
  }

  waitForSync(signal?: AbortSignal): Promise<void> {
    if (this.synced) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const onAbort = (): void => reject(signal?.reason);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.syncWaiters.push(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      });
    });
  }

  lastSyncResourceVersion(): string {
    return this.reflector.lastSyncResourceVersion();
  }

  async run(signal: AbortSignal): Promise<void> {
    if (this.started) throw new Error(`informer ${this.o.name ?? ''} already started`);
    this.started = true;
    await Promise.all([this.reflector.run(signal), this.resyncLoop(signal)]);
  }

  private async resyncLoop(signal: AbortSignal): Promise<void> {
    const period = this.o.resyncMs ?? 0;
    if (period <= 0) return;
    while (!signal.aborted) {
      try {
        await this.clock.sleep(period, signal);
      } catch {
        return; // aborted
      }
      if (!this.synced) continue;
      for (const obj of this.cache.list()) this.emit('onUpdate', (h) => h.onUpdate?.(obj, obj));
    }
  }

  // ReflectorSink: update the cache first, then tell handlers.
  replace(items: T[]): void {
    const t = this.o.transform;
    const r = this.cache.replace(t ? items.map(t) : items);
    for (const obj of r.added) this.emit('onAdd', (h) => h.onAdd?.(obj));
    for (const [old, cur] of r.updated) this.emit('onUpdate', (h) => h.onUpdate?.(old, cur));
    for (const [key, obj] of r.deleted) {
      const t: Tombstone<T> = { tombstone: true, key, obj };
      this.emit('onDelete', (h) => h.onDelete?.(t));
    }
    if (!this.synced) {
      this.synced = true;
      for (const w of this.syncWaiters.splice(0)) w();
    }
  }

  added(obj: T): void {
    this.modified(obj);
  }

  modified(obj: T): void {
    if (this.o.transform) obj = this.o.transform(obj);
    const old = this.cache.upsert(obj);
    if (old) this.emit('onUpdate', (h) => h.onUpdate?.(old, obj));
    else this.emit('onAdd', (h) => h.onAdd?.(obj));
  }

  deleted(obj: T): void {
    if (this.o.transform) obj = this.o.transform(obj);
    const old = this.cache.delete(metaNamespaceKey(obj));
    if (old) this.emit('onDelete', (h) => h.onDelete?.(obj));
  }

  private emit(what: string, f: (h: EventHandler<T>) => void): void {
    for (const h of this.handlers) this.call(h, what, () => f(h));
  }

  private call(_h: EventHandler<T>, what: string, f: () => void): void {
    try {
      f();
    } catch (e) {
      this.log.error(`${what} handler threw`, { error: e instanceof Error ? e.message : String(e) });
    }
  }
}

/**
 * Runs each informer until `signal` aborts (client-go's factory Start); the promises settle when
 * they stop. An informer that ends with an error is logged, not thrown.
 */
export function runInformers(
  signal: AbortSignal,
  informers: ReadonlyArray<Pick<Informer<unknown>, 'run'>>,
  log: Logger,
): Promise<void>[] {
  return informers.map((i) =>
    i.run(signal).catch((e: unknown) => log.warn('informer ended', { error: toStowageError(e).message })),
  );
}

/** Resolves once every informer has synced (client-go's WaitForCacheSync); rejects on abort. */
export async function waitForCacheSync(
  signal: AbortSignal | undefined,
  ...informers: ReadonlyArray<Pick<Informer<unknown>, 'waitForSync'>>
): Promise<void> {
  await Promise.all(informers.map((i) => i.waitForSync(signal)));
}
