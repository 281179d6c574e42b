import type { ListMeta, ObjectMeta } from 'kubernetes-types/meta/v1.js';
import { ignoreNotFound, InternalError } from '../util/errors.js';
import { HttpTransport, type Query, type RestConfig } from './http.js';
import {
  KINDS,
  apiVersionOf,
  collectionPath,
  objectPath,
  type KindInfo,
  type KindMap,
  type KindName,
} from './kinds.js';
import { WatchDecoder, type WatchEvent } from './watch.js';
import { errorFromTransport } from './status.js';

export type { RestConfig } from './http.js';

/** Any Kubernetes object as kubernetes-types declares them. */
export interface KubeObjectLike {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
}

export interface ObjectList<T> {
  apiVersion?: string;
  kind?: string;
  metadata: ListMeta;
  items: T[];
}

interface CallOptions {
  /** Namespace of a namespaced kind; for create/update it defaults to the object's own. */
  readonly namespace?: string;
  readonly signal?: AbortSignal;
  readonly timeoutMs?: number;
}

export interface SelectorOptions {
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
}

export interface ListOptions extends CallOptions, SelectorOptions {
  readonly limit?: number;
  readonly continue?: string;
  readonly resourceVersion?: string;
  readonly resourceVersionMatch?: 'Exact' | 'NotOlderThan';
}

export interface WatchOptions extends SelectorOptions {
  readonly namespace?: string;
  readonly resourceVersion?: string;
  readonly allowWatchBookmarks?: boolean;
  /** Server-side end of the watch. */
  readonly timeoutSeconds?: number;
  /** Aborting ends the iteration quietly. */
  readonly signal?: AbortSignal;
  /** Bound on the wait for response headers (default: the client's timeout). */
  readonly timeoutMs?: number;
}

export const PATCH_CONTENT_TYPES = {
  json: 'application/json-patch+json',
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
} as const;
export type PatchType = keyof typeof PATCH_CONTENT_TYPES;

export interface WriteOptions extends CallOptions {
  readonly dryRun?: boolean;
  readonly fieldManager?: string;
}

export interface PatchOptions extends WriteOptions {
  readonly subresource?: 'status';
}

export interface DeleteOptions extends CallOptions {
  readonly propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  readonly preconditions?: { readonly uid?: string; readonly resourceVersion?: string };
  readonly gracePeriodSeconds?: number;
  readonly dryRun?: boolean;
}

/** Verbs on one kind. Objects returned are fresh parses: callers own them. */
export interface ResourceClient<T extends KubeObjectLike> {
  readonly kind: string;
  readonly info: KindInfo;
  get(name: string, opts?: CallOptions): Promise<T>;
  /** GET, with undefined for an object that does not exist (404 NotFound); every other error is thrown. */
  getIfExists(name: string, opts?: CallOptions): Promise<T | undefined>;
  list(opts?: ListOptions): Promise<ObjectList<T>>;
  create(obj: T, opts?: WriteOptions): Promise<T>;
  /** PUT with the object's resourceVersion: ConflictError when it is stale. */
  update(obj: T, opts?: WriteOptions): Promise<T>;
  updateStatus(obj: T, opts?: WriteOptions): Promise<T>;
  patch(name: string, type: PatchType, patch: unknown, opts?: PatchOptions): Promise<T>;
  patchStatus(name: string, type: PatchType, patch: unknown, opts?: WriteOptions): Promise<T>;
  /** PATCH of /status, with undefined for an object that does not exist (404); every other error is thrown. */
  patchStatusIfExists(name: string, type: PatchType, patch: unknown, opts?: WriteOptions): Promise<T | undefined>;
  /** Resolves with the object when the server returns it (e.g. pending finalizers), else undefined. */
  delete(name: string, opts?: DeleteOptions): Promise<T | undefined>;
  /** DELETE where an object already gone is as good as deleted: a 404 resolves undefined. */
  deleteIfExists(name: string, opts?: DeleteOptions): Promise<T | undefined>;
  deleteCollection(opts?: DeleteOptions & SelectorOptions): Promise<void>;
  /**
   * Streams watch events until the server ends the watch, `signal` aborts, or the consumer stops
   * iterating. ERROR events are yielded (with a typed error) — the stream ends after them.
   */
  watch(opts?: WatchOptions): AsyncGenerator<WatchEvent<T>, void, undefined>;
}

/** Typed REST client for Stowage's Kubernetes-compatible API. */
export class RestClient {
  readonly http: HttpTransport;

  constructor(readonly config: RestConfig) {
    this.http = new HttpTransport(config);
  }

  /** e.g. `client.resource('PersistentVolume').get('pv1')`. */
  resource<K extends KindName>(kind: K): ResourceClient<KindMap[K]> {
    return new KindClient<KindMap[K]>(this.http, kind, KINDS[kind]);
  }

  /** A client for any resource the server serves (found through discovery), objects untyped. */
  dynamic(kind: string, info: KindInfo): ResourceClient<KubeObjectLike> {
    return new KindClient<KubeObjectLike>(this.http, kind, info);
  }

  /**
   * A client like this one (credentials, write gate) that sends `userAgent`, so that its writes
   * have their own field manager. It has its own connections: close it too.
   */
  withUserAgent(userAgent: string): RestClient {
    return new RestClient({ ...this.config, userAgent });
  }

  close(): void {
    this.http.close();
  }
}

class KindClient<T extends KubeObjectLike> implements ResourceClient<T> {
  constructor(
    private readonly http: HttpTransport,
    readonly kind: string,
    readonly info: KindInfo,
  ) {}

  private ns(explicit: string | undefined, obj?: T): string | undefined {
    if (!this.info.namespaced) return undefined;
    return explicit ?? obj?.metadata?.namespace;
  }

  private nameOf(obj: T): string {
    const name = obj.metadata?.name;
    if (!name) throw new InternalError(`${this.kind}: object has no metadata.name`);
    return name;
  }

  private withTypeMeta(obj: T): T {
    return { ...obj, apiVersion: obj.apiVersion ?? apiVersionOf(this.info), kind: obj.kind ?? this.kind };
  }

  private async call(
    method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
    path: string,
    opts: CallOptions | undefined,
    extra: { query?: Query; body?: unknown; contentType?: string } = {},
  ): Promise<unknown> {
    return this.http.json({ method, path, signal: opts?.signal, timeoutMs: opts?.timeoutMs, ...extra });
  }

  // The server answers with the kind this client addresses; the JSON is trusted to be that shape.
  private obj(v: unknown): T {
    if (typeof v !== 'object' || v === null) throw new InternalError(`${this.kind}: server answered with a non-object`);
    return v as T;
  }

  async get(name: string, opts?: CallOptions): Promise<T> {
    return this.obj(await this.call('GET', objectPath(this.info, name, this.ns(opts?.namespace)), opts));
  }

  /** GET, with undefined for an object that does not exist (404 NotFound); every other error is thrown. */
  getIfExists(name: string, opts?: CallOptions): Promise<T | undefined> {
    return this.get(name, opts).catch(ignoreNotFound);
  }

  async list(opts?: ListOptions): Promise<ObjectList<T>> {
    const v = await this.call('GET', collectionPath(this.info, this.ns(opts?.namespace)), opts, {
      query: {
        labelSelector: opts?.labelSelector,
        fieldSelector: opts?.fieldSelector,
        limit: opts?.limit,
        continue: opts?.continue,
        resourceVersion: opts?.resourceVersion,
        resourceVersionMatch: opts?.resourceVersionMatch,
      },
    });
    if (typeof v !== 'object' || v === null || !Array.isArray((v as { items?: unknown }).items)) {
      throw new InternalError(`${this.kind}: list answer has no items`);
    }
    const list = v as ObjectList<T>;
    list.metadata ??= {};
    // Items of a list carry no kind/apiVersion on the wire; restore them so items are whole objects.
    const apiVersion = apiVersionOf(this.info);
    list.items = list.items.map((item) =>
      item.kind && item.apiVersion ? item : { ...item, kind: this.kind, apiVersion },
    );
    return list;
  }

  async create(obj: T, opts?: WriteOptions): Promise<T> {
    const path = collectionPath(this.info, this.ns(opts?.namespace, obj));
    return this.obj(await this.call('POST', path, opts, { body: this.withTypeMeta(obj), query: writeQuery(opts) }));
  }

  async update(obj: T, opts?: WriteOptions): Promise<T> {
    const path = objectPath(this.info, this.nameOf(obj), this.ns(opts?.namespace, obj));
    return this.obj(await this.call('PUT', path, opts, { body: this.withTypeMeta(obj), query: writeQuery(opts) }));
  }

  async updateStatus(obj: T, opts?: WriteOptions): Promise<T> {
    const path = objectPath(this.info, this.nameOf(obj), this.ns(opts?.namespace, obj), 'status');
    return this.obj(await this.call('PUT', path, opts, { body: this.withTypeMeta(obj), query: writeQuery(opts) }));
  }

  async patch(name: string, type: PatchType, patch: unknown, opts?: PatchOptions): Promise<T> {
    const path = objectPath(this.info, name, this.ns(opts?.namespace), opts?.subresource);
    return this.obj(
      await this.call('PATCH', path, opts, {
        body: patch,
        contentType: PATCH_CONTENT_TYPES[type],
        query: writeQuery(opts),
      }),
    );
  }

  patchStatus(name: string, type: PatchType, patch: unknown, opts?: WriteOptions): Promise<T> {
    return this.patch(name, type, patch, { ...opts, subresource: 'status' });
  }

  patchStatusIfExists(name: string, type: PatchType, patch: unknown, opts?: WriteOptions): Promise<T | undefined> {
    return this.patchStatus(name, type, patch, opts).catch(ignoreNotFound);
  }

  async delete(name: string, opts?: DeleteOptions): Promise<T | undefined> {
    const v = await this.call('DELETE', objectPath(this.info, name, this.ns(opts?.namespace)), opts, {
      body: deleteBody(opts),
    });
    if (typeof v === 'object' && v !== null && (v as { kind?: unknown }).kind !== 'Status') return v as T;
    return undefined;
  }

  deleteIfExists(name: string, opts?: DeleteOptions): Promise<T | undefined> {
    return this.delete(name, opts).catch(ignoreNotFound);
  }

  async deleteCollection(opts?: DeleteOptions & SelectorOptions): Promise<void> {
    await this.call('DELETE', collectionPath(this.info, this.ns(opts?.namespace)), opts, {
      body: deleteBody(opts),
      query: { labelSelector: opts?.labelSelector, fieldSelector: opts?.fieldSelector },
    });
  }

  async *watch(opts?: WatchOptions): AsyncGenerator<WatchEvent<T>, void, undefined> {
    const res = await this.http.stream({
      method: 'GET',
      path: collectionPath(this.info, this.ns(opts?.namespace)),
      query: {
        watch: 'true',
        labelSelector: opts?.labelSelector,
        fieldSelector: opts?.fieldSelector,
        resourceVersion: opts?.resourceVersion,
        allowWatchBookmarks: opts?.allowWatchBookmarks ? 'true' : undefined,
        timeoutSeconds: opts?.timeoutSeconds,
      },
      signal: opts?.signal,
      timeoutMs: opts?.timeoutMs,
    });
    const decoder = new WatchDecoder<T>();
    // A peer that vanished without closing would hold the watch forever: past the server-side
    // timeout (plus slack) the stream is cut and the iteration ends as if the server had closed it.
    const guard =
      opts?.timeoutSeconds !== undefined
        ? setTimeout(() => res.destroy(), opts.timeoutSeconds * 1000 + WATCH_SLACK_MS)
        : undefined;
    guard?.unref();
    try {
      try {
        for await (const chunk of res) {
          for (const ev of decoder.push(chunk as Buffer)) {
            yield ev;
            if (ev.type === 'ERROR') return;
          }
        }
      } catch (e) {
        if (opts?.signal?.aborted) return;
        throw errorFromTransport(e);
      }
      if (opts?.signal?.aborted) return;
      // A connection cut mid-stream ends the iteration like a server timeout: callers resume.
      for (const ev of decoder.end()) yield ev;
    } finally {
      clearTimeout(guard);
      res.destroy();
    }
  }
}

const WATCH_SLACK_MS = 30_000; // generous: a server ends the watch itself at timeoutSeconds

function writeQuery(opts: WriteOptions | undefined): Query {
  return { dryRun: opts?.dryRun ? 'All' : undefined, fieldManager: opts?.fieldManager };
}

function deleteBody(opts: DeleteOptions | undefined): unknown {
  if (!opts) return undefined;
  const body: Record<string, unknown> = { apiVersion: 'v1', kind: 'DeleteOptions' };
  if (opts.propagationPolicy) body.propagationPolicy = opts.propagationPolicy;
  if (opts.preconditions) body.preconditions = { ...opts.preconditions };
  if (opts.gracePeriodSeconds !== undefined) body.gracePeriodSeconds = opts.gracePeriodSeconds;
  if (opts.dryRun) body.dryRun = ['All'];
  return Object.keys(body).length > 2 ? body : undefined;
}

export { loadKubeconfig } from './kubeconfig.js';
