import { randomUUID } from 'node:crypto';

import { metaTime } from '../util/metatime.js';

import type { Store } from '../store/store.js';
import { AlreadyExistsError, ConflictError, NotFoundError, type FieldCause } from '../util/errors.js';

import {
  alreadyExists,
  ApiAlreadyExistsError,
  badRequest,
  conflict,
  forbidden,
  invalid,
  notFound,
  pathNotFound,
  type ErrorSubject,
} from './status.js';

import type {
  AdmissionContext,
  KubeObject,
  PartialUpdateSubresource,
  ResourceDef,
  SubresourceDef,
} from './resources/types.js';
import { decodeStored, WatchCache, type CachedObject } from './watchcache.js';

import { finalizersOnDelete, sameFinalizerSet, type PropagationPolicy } from './gcfinalizers.js';

import { fieldManagerScope, updateManagedFields, type FieldManagerScope } from './fieldmanager/fieldmanager.js';
import { jsonEqual } from '../util/jsonequal.js';

/**
 * How a write changes managedFields: an Update owned by `update` (kube names it from the
 * `fieldManager` parameter or the User-Agent), an apply that computed them already, or none at all
 * (writes kube makes below its field manager, such as a pod's binding). `subresource` names the
 * endpoint the Update entry records when it is not the one the registry writes through: a
 * `<kind>/scale` write stores the main object, and kube records its entry with `subresource: scale`.
 */
export type FieldManagement = { readonly update: string; readonly subresource?: string } | 'applied' | 'untracked';

/** The manager of writes the server makes itself. */
export const SERVER_MANAGER = 'kube-apiserver';

/** Options common to writes. */
export interface WriteOptions {
  readonly dryRun?: boolean;
  /** Default: an Update by SERVER_MANAGER. */
  readonly fields?: FieldManagement;
  /**
   * Validating admission with the requester in view (NodeRestriction): sees the object as it would
   * be stored (undefined for a delete) and the stored one (undefined for a create); throws to refuse.
   */
  readonly admit?: (obj: KubeObject | undefined, old: KubeObject | undefined) => void;
}

export interface DeleteOptions extends WriteOptions {
  readonly preconditions?: { uid?: string; resourceVersion?: string };
  readonly gracePeriodSeconds?: number;
  readonly propagationPolicy?: PropagationPolicy;
  readonly orphanDependents?: boolean;
}

export type DeleteResult = { kind: 'deleted'; obj: KubeObject } | { kind: 'pending'; obj: KubeObject };

const GENERATE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** The storage key of an object: `/registry/<group|core>/<plural>/[<namespace>/]<name>`. */
export function storageKey(def: ResourceDef, namespace: string | undefined, name: string): string {
  return `${keyPrefix(def, namespace)}${name}`;
}

/** The key prefix of a resource, or of its objects in one namespace. */
export function keyPrefix(def: ResourceDef, namespace?: string): string {
  const base = `/registry/${def.group || 'core'}/${def.plural}/`;
  return def.namespaced && namespace ? `${base}${namespace}/` : base;
}

function nowIso(): string {
  // metav1.Time serializes with second precision.
  return metaTime();
}

function clone<T>(o: T): T {
  return structuredClone(o);
}

/** Serializes an object for the store: resourceVersion is the store's revision, never stored. */
function encode(obj: KubeObject): string {
  const rv = obj.metadata.resourceVersion;
  delete obj.metadata.resourceVersion;
  const s = JSON.stringify(obj);
  if (rv !== undefined) obj.metadata.resourceVersion = rv;
  return s;
}

export type InvalidMessageFormatter = (kind: string, name: string, causes: readonly FieldCause[]) => string;

/**
 * Kubernetes' generic registry for one kind: create/update/delete with the kind's strategy
 * (defaults, validation, status handling) over the revisioned store; reads from the watch cache.
 */
export class ResourceStorage {
  readonly cache: WatchCache;

  constructor(
    readonly def: ResourceDef,
    private readonly store: Store,
    readonly registry: ApiRegistry,
    watchHistory?: number,
  ) {
    this.cache = new WatchCache(store, keyPrefix(def), watchHistory, def.custom?.fromStorage);
  }

  subject(name?: string): ErrorSubject {
    return { group: this.def.group, resource: this.def.plural, name };
  }

  get(namespace: string | undefined, name: string): CachedObject | undefined {
    return this.cache.get(storageKey(this.def, namespace, name));
  }

  mustGet(namespace: string | undefined, name: string): CachedObject {
    const o = this.get(namespace, name);
    if (!o) throw notFound(this.subject(name));
    return o;
  }

  /** Validates a create that is not stored (the review kinds): the same 422 a create would answer. */
  validateCreate(obj: KubeObject): void {
    const causes = this.def.validateCreate(obj, this.registry.admissionContext());
    if (causes.length) this.invalid(obj.metadata.name ?? '', causes);
  }

  /**
   * The object as it is now. With a synchronous store the cache is never behind; otherwise (etcd,
   * other API servers writing) it is a read from the store, as kube-apiserver's GET and its
   * update's first read are.
   */
  async mustGetCurrent(namespace: string | undefined, name: string): Promise<CachedObject> {
    if (this.store.synchronousWatch) return this.mustGet(namespace, name);
    const kv = await this.store.get(storageKey(this.def, namespace, name));
    if (!kv) throw notFound(this.subject(name));
    return this.cache.get(kv.key)?.rev === kv.modRevision
      ? this.cache.get(kv.key)!
      : decodeStored(kv, kv.modRevision, this.def.custom?.fromStorage);
  }

  private invalid(name: string, causes: readonly FieldCause[]): never {
    throw invalid(
      this.def.kind,
      this.def.group,
      name,
      causes,
      this.registry.formatInvalid(this.def.kind, name, causes),
    );
  }

  /** Creates `obj` (which the caller hands over: it is modified and returned). */
  async create(obj: KubeObject, namespace: string | undefined, opts: WriteOptions = {}): Promise<KubeObject> {
    const def = this.def;
    const meta = obj.metadata;
    if (def.namespaced) {
      if (meta.namespace && namespace && meta.namespace !== namespace) {
        throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
      }
      meta.namespace = namespace ?? meta.namespace;
      if (!meta.namespace) throw badRequest('the namespace of the object must be set');
      await this.registry.checkNamespaceWritable(meta.namespace, def);
    } else {
      delete meta.namespace;
    }
    if (!meta.name) {
      if (meta.generateName) {
        let suffix = '';
        for (let i = 0; i < 5; i++) suffix += GENERATE_ALPHABET[Math.floor(Math.random() * GENERATE_ALPHABET.length)];
        meta.name = meta.generateName + suffix;
      } else {
        this.invalid('', [
          { type: 'FieldValueRequired', field: 'metadata.name', message: 'name or generateName is required' },
        ]);
      }
    }
    const name = meta.name!;
    meta.uid = randomUUID();
    meta.creationTimestamp = nowIso();
    delete meta.resourceVersion;
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    delete meta.selfLink;
    const requestedFields = meta.managedFields;
    delete meta.managedFields;
    if (meta.generation !== undefined) meta.generation = 1;
    obj.apiVersion = def.group ? `${def.group}/${def.version}` : def.version;
    obj.kind = def.kind;
    // Requester-aware admission sees the object as sent (kube runs NodeRestriction before the strategy).
    opts.admit?.(obj, undefined);
    const ctx = this.registry.admissionContext();
    const managedFields = this.managedFields(
      obj,
      undefined,
      requestedFields,
      opts.fields,
      undefined,
      ctx.now,
      'request',
    );
    def.prepareForCreate(obj, ctx);
    def.mutatingAdmission?.(obj, undefined, ctx);
    const causes = def.validateCreate(obj, ctx);
    if (causes.length) this.invalid(name, causes);
    setManagedFields(obj, managedFields);
    if (opts.dryRun) {
      if (this.get(meta.namespace, name)) throw alreadyExists(this.subject(name));
      return obj;
    }
    try {
      const kv = await this.store.create(storageKey(def, meta.namespace, name), encode(obj));
      obj.metadata.resourceVersion = String(kv.modRevision);
      return obj;
    } catch (e) {
      if (e instanceof AlreadyExistsError) throw alreadyExists(this.subject(name));
      throw e;
    }
  }

  /** The field manager of writes through the main resource or one subresource. */
  fieldScope(subresource?: string): FieldManagerScope {
    const d = this.def;
    return fieldManagerScope({
      schema: d.schema,
      apiVersion: d.group ? `${d.group}/${d.version}` : d.version,
      hasStatus: d.hasStatus,
      subresource,
    });
  }

  /**
   * The managedFields of a write of `obj` over `old`. kube-apiserver's field manager runs on the
   * request as decoded and defaulted, before mutating admission and the strategy: what those set
   * (protection finalizers, the default class, an allocated ClusterIP, a Job's generated selector)
   * is no one's; `obj` is then the request (`stage` 'request'), defaulted here. A subresource's
   * write is recorded once its strategy has kept what it may not change (`stage` 'prepared').
   * `requested` is what the body carried; an apply brought its own; an untracked write keeps the
   * live object's.
   */
  private managedFields(
    obj: KubeObject,
    old: KubeObject | undefined,
    requested: unknown,
    how: FieldManagement | undefined,
    subresource: string | undefined,
    now: string,
    stage: 'request' | 'prepared',
  ): unknown[] | undefined {
    if (how === 'applied') return requested as unknown[] | undefined;
    if (how === 'untracked') return old?.metadata.managedFields;
    const seen = stage === 'request' ? asRequested(this.def, obj) : obj;
    return updateManagedFields(
      this.fieldScope(how?.subresource ?? subresource),
      old,
      seen,
      requested,
      how?.update ?? SERVER_MANAGER,
      now,
    );
  }

  /** The kind's subresource `name` beyond `/status`, if it has one. */
  subresource(name: string): SubresourceDef | undefined {
    return this.def.subresources?.find((s) => s.name === name);
  }

  private partialUpdate(name: string): PartialUpdateSubresource {
    const sub = this.subresource(name);
    if (sub?.type !== 'partialUpdate') throw pathNotFound();
    return sub;
  }

  /**
   * Replaces an object (main resource, `/status` or a partial-update subresource such as a
   * namespace's `/finalize`). A resourceVersion in `input` is a
   * precondition (409 on mismatch); without one the update is unconditional and retried on races.
   * `next` computes the new object from the current one (the cache's own copy: read it, never
   * modify it) and returns a fresh object, which this method then owns; it is re-run on a race.
   */
  async update(
    namespace: string | undefined,
    name: string,
    next: (current: KubeObject) => KubeObject,
    o: WriteOptions & { subresource?: string } = {},
  ): Promise<KubeObject> {
    const def = this.def;
    const partial = o.subresource && o.subresource !== 'status' ? this.partialUpdate(o.subresource) : undefined;
    const key = storageKey(def, namespace, name);
    for (let attempt = 0; ; attempt++) {
      // kube-apiserver's GuaranteedUpdate: with a store whose watch lags (etcd), the first attempt
      // starts from the watch cache's copy, saving a read; the write compares its mod revision, and
      // anything that fails on it (conflict, precondition, validation, a no-op) is redone from a
      // fresh read, so a stale cache never decides the outcome.
      const cached = attempt === 0 && !o.dryRun && !this.store.synchronousWatch ? this.cache.get(key) : undefined;
      try {
        const cur = cached ?? (await this.mustGetCurrent(namespace, name));
        const old = cur.obj;
        const obj = next(old);
        if (!obj || typeof obj !== 'object' || typeof obj.metadata !== 'object' || obj.metadata === null) {
          throw badRequest('the object has no metadata');
        }
        const meta = obj.metadata;
        if (meta.name !== undefined && meta.name !== name) {
          throw badRequest(`the name of the object (${meta.name}) does not match the name on the URL (${name})`);
        }
        if (def.namespaced && meta.namespace !== undefined && meta.namespace !== namespace) {
          throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
        }
        const wantRv = meta.resourceVersion;
        if (wantRv !== undefined && wantRv !== '' && wantRv !== old.metadata.resourceVersion)
          throw conflict(this.subject(name));
        if (meta.uid !== undefined && meta.uid !== '' && meta.uid !== old.metadata.uid) {
          throw conflict(
            this.subject(name),
            `Precondition failed: UID in precondition: ${meta.uid}, UID in object meta: ${old.metadata.uid}`,
          );
        }
        // Fields the server owns.
        meta.name = name;
        if (def.namespaced) meta.namespace = namespace;
        meta.uid = old.metadata.uid;
        meta.creationTimestamp = old.metadata.creationTimestamp;
        if (old.metadata.deletionTimestamp) {
          meta.deletionTimestamp = old.metadata.deletionTimestamp;
          meta.deletionGracePeriodSeconds = old.metadata.deletionGracePeriodSeconds;
        } else {
          delete meta.deletionTimestamp;
          delete meta.deletionGracePeriodSeconds;
        }
        const requestedFields = meta.managedFields;
        delete meta.managedFields;
        if (old.metadata.generation !== undefined) meta.generation = old.metadata.generation;
        obj.apiVersion = old.apiVersion;
        obj.kind = old.kind;
        o.admit?.(obj, old);
        const ctx = this.registry.admissionContext();
        let managedFields: unknown[] | undefined;
        let partialCauses: FieldCause[] = [];
        if (o.subresource) {
          if (o.subresource === 'status') def.prepareForStatusUpdate(obj, old, ctx);
          else if (partial) partialCauses = partial.prepareForUpdate(obj, old);
          // A subresource's strategy keeps what the endpoint may not change (spec, or most of the
          // object): recorded after it, the writer owns only what it could change (kube's reset fields).
          managedFields = this.managedFields(obj, old, requestedFields, o.fields, o.subresource, ctx.now, 'prepared');
        } else {
          managedFields = this.managedFields(obj, old, requestedFields, o.fields, undefined, ctx.now, 'request');
          def.prepareForUpdate(obj, old, ctx);
          def.mutatingAdmission?.(obj, old, ctx);
        }
        const causes =
          o.subresource === 'status'
            ? def.validateStatusUpdate(obj, old, ctx)
            : partial
              ? partialCauses
              : def.validateUpdate(obj, old, ctx);
        if (causes.length) this.invalid(name, causes);
        if (old.metadata.generation !== undefined && o.subresource !== 'status' && specChanged(old, obj)) {
          meta.generation = (old.metadata.generation ?? 0) + 1;
        }
        setManagedFields(obj, managedFields);
        meta.resourceVersion = old.metadata.resourceVersion;
        if (jsonEqual(obj, old)) {
          if (cached) continue;
          return old; // no-op updates do not bump resourceVersion
        }
        if (o.dryRun) return obj;
        try {
          if (
            meta.deletionTimestamp &&
            (!meta.finalizers || meta.finalizers.length === 0) &&
            !extraFinalizersPending(def, obj)
          ) {
            // The last finalizer is gone from an object being deleted: it goes now.
            await this.store.delete(key, cur.rev);
            return obj;
          }
          const kv = await this.store.update(key, encode(obj), cur.rev);
          obj.metadata.resourceVersion = String(kv.modRevision);
          return obj;
        } catch (e) {
          if (e instanceof ConflictError) {
            if (wantRv || attempt > 20) throw conflict(this.subject(name));
            continue;
          }
          if (e instanceof NotFoundError) throw notFound(this.subject(name));
          throw e;
        }
      } catch (e) {
        if (cached) continue;
        throw e;
      }
    }
  }

  /**
   * Deletes an object. With finalizers it only gets a deletionTimestamp (and stays until the last
   * finalizer is removed); a pod on a node is deleted gracefully (its node agent finishes it).
   */
  async delete(namespace: string | undefined, name: string, opts: DeleteOptions = {}): Promise<DeleteResult> {
    const def = this.def;
    for (let attempt = 0; ; attempt++) {
      const cur = await this.mustGetCurrent(namespace, name);
      const old = cur.obj;
      const pre = opts.preconditions;
      if (pre?.uid && pre.uid !== old.metadata.uid) {
        throw conflict(
          this.subject(name),
          `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${old.metadata.uid}`,
        );
      }
      if (pre?.resourceVersion && pre.resourceVersion !== old.metadata.resourceVersion) {
        throw conflict(
          this.subject(name),
          `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${old.metadata.resourceVersion}`,
        );
      }
      opts.admit?.(undefined, old);
      const graceful = def.gracefulDeletion?.(old, opts.gracePeriodSeconds);
      const oldFinalizers = old.metadata.finalizers ?? [];
      const finalizers = withDeletionFinalizers(def, old, finalizersOnDelete(oldFinalizers, opts));
      const finalizersChanged = !sameFinalizerSet(finalizers, oldFinalizers);
      const key = storageKey(def, namespace, name);
      try {
        if (finalizers.length > 0 || graceful !== undefined || extraFinalizersPending(def, old)) {
          // rest.BeforeDelete: a graceful deletion is due at now + grace; a later delete may only shorten it.
          const prevGrace = old.metadata.deletionGracePeriodSeconds ?? 0;
          const obj = clone(old);
          if (finalizersChanged) obj.metadata.finalizers = finalizers;
          if (old.metadata.deletionTimestamp && (graceful === undefined || graceful >= prevGrace)) {
            // A pending graceful deletion keeps its finalizers; one held only by finalizers may switch policy.
            if (prevGrace > 0 || !finalizersChanged) return { kind: 'pending', obj: clone(old) };
          } else {
            obj.metadata.deletionTimestamp = graceful === undefined ? nowIso() : metaTime(Date.now() + graceful * 1000);
            obj.metadata.deletionGracePeriodSeconds = graceful ?? 0;
          }
          def.beforeDeletionMarked?.(obj);
          if (graceful === 0 && finalizers.length === 0 && !extraFinalizersPending(def, obj)) {
            if (!opts.dryRun) await this.store.delete(key, cur.rev);
            return { kind: 'deleted', obj };
          }
          if (opts.dryRun) return { kind: 'pending', obj };
          if (jsonEqual(obj, old)) return { kind: 'pending', obj };
          const kv = await this.store.update(key, encode(obj), cur.rev);
          obj.metadata.resourceVersion = String(kv.modRevision);
          return { kind: 'pending', obj };
        }
        if (!opts.dryRun) await this.store.delete(key, cur.rev);
        return { kind: 'deleted', obj: clone(old) };
      } catch (e) {
        if (e instanceof ConflictError && attempt < 20) continue;
        if (e instanceof ConflictError) throw conflict(this.subject(name));
        if (e instanceof NotFoundError) throw notFound(this.subject(name));
        throw e;
      }
    }
  }
}

/** The object as kube's field manager sees a request: decoded and defaulted (a copy when defaulting changes it). */
function asRequested(def: ResourceDef, obj: KubeObject): KubeObject {
  if (!def.defaults) return obj;
  const o = clone(obj);
  def.defaults(o);
  return o;
}

function setManagedFields(obj: KubeObject, mf: unknown[] | undefined): void {
  if (mf === undefined) delete obj.metadata.managedFields;
  else obj.metadata.managedFields = mf;
}

/** The kind's own deletion finalizers join on the first delete (not once deletion has started). */
function withDeletionFinalizers(def: ResourceDef, old: KubeObject, finalizers: string[]): string[] {
  if (!def.deletionFinalizers || old.metadata.deletionTimestamp) return finalizers;
  return [...finalizers, ...def.deletionFinalizers.filter((f) => !finalizers.includes(f))];
}

function extraFinalizersPending(def: ResourceDef, obj: KubeObject): boolean {
  return def.extraFinalizersPending?.(obj) ?? false;
}

function specChanged(a: KubeObject, b: KubeObject): boolean {
  const strip = (o: KubeObject): Record<string, unknown> => {
    const { metadata: _m, status: _s, ...rest } = o;
    return rest;
  };
  return !jsonEqual(strip(a), strip(b));
}

/** All resources of the server, and the cross-kind rules (namespaces, admission lookups). */
export class ApiRegistry {
  /** The kind's storage at its first (preferred) version, for lookups by kind. */
  private readonly byKind = new Map<string, ResourceStorage>();
  /** Every served group-version-resource (a kind served at two versions has two). */
  private readonly storages: ResourceStorage[] = [];
  private readonly byPath = new Map<string, ResourceStorage>();
  /** The kind whose objects namespaced objects live in. */
  private readonly namespaces: ResourceStorage | undefined;
  private readonly watchHistory: number | undefined;
  /** The served kinds' defs, replaced (never mutated) when a kind is added or removed. */
  private servedDefs: readonly ResourceDef[] = [];
  private readonly changeListeners = new Set<() => void>();

  constructor(
    readonly store: Store,
    defs: readonly ResourceDef[],
    readonly formatInvalid: InvalidMessageFormatter,
    opts: { watchHistory?: number } = {},
  ) {
    this.watchHistory = opts.watchHistory;
    for (const def of defs) this.add(new ResourceStorage(def, store, this, opts.watchHistory));
    this.servedDefs = this.storages.map((s) => s.def);
    this.namespaces = this.storages.find((s) => s.def.isNamespace);
  }

  private add(s: ResourceStorage): void {
    const def = s.def;
    if (!this.byKind.has(def.kind)) this.byKind.set(def.kind, s);
    this.storages.push(s);
    this.byPath.set(`${def.group}/${def.version}/${def.plural}`, s);
  }

  /** The defs of every served kind: one array per set of kinds, so documents built from it can be cached by identity. */
  defs(): readonly ResourceDef[] {
    return this.servedDefs;
  }

  /** Called after each change of the served kinds (custom resources added or removed). */
  onChange(listener: () => void): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  /**
   * Serves a kind from now on (a CustomResourceDefinition's version): its watch cache lists the
   * store before it answers. Replaces a kind already served at the same group/version/plural.
   */
  async register(def: ResourceDef): Promise<ResourceStorage> {
    const s = new ResourceStorage(def, this.store, this, this.watchHistory);
    await s.cache.start();
    const old = this.byGroupVersionPlural(def.group, def.version, def.plural);
    if (old) this.remove(old);
    this.add(s);
    if (this.state === 'stopped') s.cache.stop();
    this.changed();
    return s;
  }

  /** Stops serving a kind registered with `register`; its watches end. */
  unregister(s: ResourceStorage): void {
    if (!this.storages.includes(s)) return;
    this.remove(s);
    this.changed();
  }

  private remove(s: ResourceStorage): void {
    const i = this.storages.indexOf(s);
    if (i >= 0) this.storages.splice(i, 1);
    const d = s.def;
    const path = `${d.group}/${d.version}/${d.plural}`;
    if (this.byPath.get(path) === s) this.byPath.delete(path);
    if (this.byKind.get(d.kind) === s) {
      this.byKind.delete(d.kind);
      const next = this.storages.find((x) => x.def.kind === d.kind);
      if (next) this.byKind.set(d.kind, next);
    }
    s.cache.stop();
  }

  private changed(): void {
    this.servedDefs = this.storages.map((s) => s.def);
    for (const l of [...this.changeListeners]) l();
  }

  /** Why this server is not ready (a cache not synced), or undefined when it is. */
  notReady(): string | undefined {
    for (const s of this.storages) if (!s.cache.isSynced()) return `watch cache of ${s.def.plural} not synced`;
    return undefined;
  }

  private state: 'new' | 'started' | 'stopped' = 'new';

  async start(): Promise<void> {
    await Promise.all(this.storages.map((s) => s.cache.start()));
    if (this.state === 'new') this.state = 'started';
  }

  stop(): void {
    this.state = 'stopped';
    for (const s of this.storages) s.cache.stop();
  }

  /** 'started' once every watch cache has its initial list; 'stopped' once the server shuts down. */
  lifecycle(): 'new' | 'started' | 'stopped' {
    return this.state;
  }

  all(): ResourceStorage[] {
    return [...this.storages];
  }

  byGroupVersionPlural(group: string, version: string, plural: string): ResourceStorage | undefined {
    return this.byPath.get(`${group}/${version}/${plural}`);
  }

  kind(kind: string): ResourceStorage {
    const s = this.byKind.get(kind);
    if (!s) throw new Error(`unknown kind ${kind}`);
    return s;
  }

  admissionContext(): AdmissionContext {
    return {
      now: nowIso(),
      list: (kind, namespace) => {
        const s = this.byKind.get(kind);
        if (!s) return [];
        return s.cache.list(keyPrefix(s.def, namespace)).map((c) => c.obj);
      },
      get: (kind, name, namespace) => this.byKind.get(kind)?.get(namespace, name)?.obj,
    };
  }

  /** Creating in a missing namespace is 404; in a terminating one, 403 (unless the kind may, as events). */
  async checkNamespaceWritable(namespace: string, def: ResourceDef): Promise<void> {
    // NamespaceLifecycle admission: a namespace not (yet) in the cache is looked up live, so one
    // created a moment ago (through this server or another on the same etcd) is found.
    const ns =
      this.namespaces?.get(undefined, namespace) ??
      (await this.namespaces?.mustGetCurrent(undefined, namespace).catch(() => undefined));
    if (!ns) throw notFound({ group: '', resource: this.namespaces?.def.plural ?? 'namespaces', name: namespace });
    if (ns.obj.metadata.deletionTimestamp && !def.creatableInTerminatingNamespace) {
      throw forbidden(
        `${def.plural}${def.group ? '.' + def.group : ''} "" is forbidden: unable to create new content in namespace ${namespace} because it is being terminated`,
        { group: def.group, resource: def.plural },
      );
    }
  }

  /** Creates each kind's initial objects (the default namespaces) that are missing. */
  async ensureInitialObjects(): Promise<void> {
    for (const s of this.byKind.values()) {
      for (const o of s.def.initialObjects ?? []) {
        if (s.get(o.metadata.namespace, o.metadata.name ?? '')) continue;
        try {
          await s.create(structuredClone(o), o.metadata.namespace);
        } catch (e) {
          if (!(e instanceof ApiAlreadyExistsError)) throw e;
        }
      }
    }
  }
}
