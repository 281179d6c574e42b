/**
 * Kubernetes' field manager over one kind: the managedFields of every write (Update operations,
 * owned by the writer, taking fields from others) and server-side apply (Apply operations:
 * merge, prune what the applier stopped applying, conflicts with other owners).
 */
import type { KubeObject, Schema } from '../resources/types.js';
import { ApiConflictError } from '../status.js';
import { difference, FieldSet, intersection, pathString, recursiveDifference, union } from './fieldset.js';
import {
  decodeManagedFields,
  encodeManagedFields,
  isResetManagedFields,
  ManagedFieldsError,
  managerKey,
  type ManagerEntry,
  type Managers,
} from './managers.js';
import { compare, ensureNamedFieldsAreMembers, merge, removeItems, toFieldSet } from './typed.js';
import { typeOf, type TypeNode } from './types.js';

export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';

/** Fields no manager owns (kube's stripMetaManager). */
const STRIPPED = new FieldSet();
for (const p of [
  ['apiVersion'],
  ['kind'],
  ['metadata'],
  ...[
    'name',
    'namespace',
    'creationTimestamp',
    'selfLink',
    'uid',
    'clusterName',
    'generation',
    'managedFields',
    'resourceVersion',
  ].map((f) => ['metadata', f]),
]) {
  STRIPPED.insert(p.map((f) => `f:${f}`));
}

/** One kind's field manager for writes through one endpoint (the main resource or a subresource). */
export interface FieldManagerScope {
  readonly type: TypeNode;
  readonly apiVersion: string;
  /** '' for the main resource. */
  readonly subresource: string;
  /** Fields this endpoint resets (a status-bearing kind's status on the main resource; the rest on /status). */
  readonly ignored: FieldSet;
}

const scopes = new WeakMap<Schema, Map<string, FieldManagerScope>>();

export function fieldManagerScope(o: {
  schema: Schema;
  apiVersion: string;
  hasStatus: boolean;
  subresource?: string;
}): FieldManagerScope {
  const sub = o.subresource ?? '';
  let byKey = scopes.get(o.schema);
  if (!byKey) scopes.set(o.schema, (byKey = new Map()));
  const key = `${o.apiVersion}\u0000${sub}\u0000${o.hasStatus}`;
  let s = byKey.get(key);
  if (!s) {
    const ignored = new FieldSet();
    if (sub === 'status') {
      for (const f of Object.keys(o.schema.properties ?? {}))
        if (!['apiVersion', 'kind', 'metadata', 'status'].includes(f)) ignored.insert([`f:${f}`]);
    } else if (o.hasStatus) ignored.insert(['f:status']);
    s = { type: typeOf(o.schema), apiVersion: o.apiVersion, subresource: sub, ignored };
    byKey.set(key, s);
  }
  return s;
}

/** The object as the typed comparison sees it: without managedFields. */
function withoutManagedFields(o: KubeObject): KubeObject {
  if (o.metadata?.managedFields === undefined) return o;
  const { managedFields: _m, ...metadata } = o.metadata;
  return { ...o, metadata };
}

// Decoded managedFields of stored objects (the watch cache's, which are never modified), so that a
// write decodes the live object's managers once rather than on every update of it.
const decoded = new WeakMap<object, Managers>();

/** The managers of a managedFields list (empty when it is malformed), as a copy the caller may change. */
function decodeOrEmpty(list: unknown): Managers {
  let m = list && typeof list === 'object' ? decoded.get(list) : undefined;
  if (!m) {
    try {
      m = decodeManagedFields(list);
    } catch (e) {
      if (!(e instanceof ManagedFieldsError)) throw e;
      m = new Map();
    }
    if (list && typeof list === 'object') decoded.set(list, m);
  }
  // Entries are copied; their field sets are never changed in place.
  return new Map([...m].map(([k, e]) => [k, { ...e }]));
}

/**
 * The managedFields after a non-apply write (kube's FieldManager.Update): `old` is undefined on
 * create; `requested` is what the client sent in the body (honoured on the main resource, an empty
 * list resets; otherwise the live object's are kept). The writer owns what it added or changed,
 * and other managers lose those fields and anything removed.
 */
export function updateManagedFields(
  scope: FieldManagerScope,
  old: KubeObject | undefined,
  obj: KubeObject,
  requested: unknown,
  manager: string,
  now: string,
): Record<string, unknown>[] | undefined {
  let managers: Managers;
  if (scope.subresource !== '') managers = decodeOrEmpty(old?.metadata.managedFields);
  else if (isResetManagedFields(requested)) managers = new Map();
  else {
    managers = decodeOrEmpty(requested);
    if (managers.size === 0) managers = decodeOrEmpty(old?.metadata.managedFields);
  }
  const c = compare(old ? withoutManagedFields(old) : {}, withoutManagedFields(obj), scope.type, scope.ignored);
  const changed = union(c.modified, c.added);
  for (const e of managers.values()) e.set = difference(difference(e.set, changed), c.removed);
  const taken = difference(recursiveDifference(changed, scope.ignored), STRIPPED);
  if (!taken.isEmpty()) {
    const key = managerKey(manager, 'Update', scope.apiVersion, scope.subresource);
    const prev = managers.get(key);
    managers.set(key, {
      manager,
      operation: 'Update',
      apiVersion: scope.apiVersion,
      subresource: scope.subresource,
      time: now,
      set: prev ? union(prev.set, taken) : taken,
    });
    capUpdateManagers(managers);
  }
  return encodeManagedFields(managers);
}

/** kube's DefaultMaxUpdateManagers: more Update entries than this and the oldest are merged. */
export const MAX_UPDATE_MANAGERS = 10;
const ANCIENT_CHANGES = 'ancient-changes';

/**
 * kube's capManagersManager: past MAX_UPDATE_MANAGERS Update entries, the oldest are merged (per
 * apiVersion) into one `ancient-changes` entry, which takes the time of the latest merged in.
 */
function capUpdateManagers(managers: Managers): void {
  const updaters = [...managers].filter(([, e]) => e.operation === 'Update' && !e.set.isEmpty());
  if (updaters.length <= MAX_UPDATE_MANAGERS) return;
  const secs = (e: ManagerEntry): number => (e.time ? Math.floor(Date.parse(e.time) / 1000) : 0);
  updaters.sort(([ka, a], [kb, b]) => secs(a) - secs(b) || (ka < kb ? -1 : ka > kb ? 1 : 0));
  const firstOfVersion = new Map<string, string>();
  let length = updaters.length;
  for (const [k, e] of updaters) {
    if (length <= MAX_UPDATE_MANAGERS) break;
    const bucket = managerKey(ANCIENT_CHANGES, 'Update', e.apiVersion, '');
    const first = firstOfVersion.get(e.apiVersion);
    if (first === undefined) {
      firstOfVersion.set(e.apiVersion, k);
      continue;
    }
    if (!managers.has(bucket)) {
      const f = managers.get(first)!;
      managers.delete(first);
      managers.set(bucket, { ...f, manager: ANCIENT_CHANGES, subresource: '' });
    }
    const b = managers.get(bucket)!;
    managers.set(bucket, { ...b, set: union(e.set, b.set), time: e.time });
    managers.delete(k);
    length--;
  }
}

export interface ApplyRequest {
  /** The live object, or undefined when the apply creates it. */
  readonly live: KubeObject | undefined;
  /** The applied configuration (decoded, of the endpoint's kind). */
  readonly config: KubeObject;
  readonly manager: string;
  readonly force: boolean;
  readonly now: string;
}

interface Conflict {
  readonly entry: ManagerEntry;
  readonly path: readonly string[];
}

/**
 * Server-side apply (kube's FieldManager.Apply with structured-merge-diff's Updater.Apply): the
 * object after merging `config` into the live object, with the applier's fields replaced by what
 * it applied, fields it alone owned and no longer applies removed, and managedFields updated.
 * A changed field another manager owns is a conflict (409) unless `force` takes it over.
 */
export function applyConfig(scope: FieldManagerScope, r: ApplyRequest): KubeObject {
  if (r.config.metadata?.managedFields !== undefined) throw new ApplyBadRequest('metadata.managedFields must be nil');
  const live = r.live ? withoutManagedFields(r.live) : ({ metadata: {} } as KubeObject);
  const managers = r.live ? decodeOrEmpty(r.live.metadata.managedFields) : new Map<string, ManagerEntry>();
  const key = managerKey(r.manager, 'Apply', scope.apiVersion, scope.subresource);
  const prev = managers.get(key);
  const applied = difference(recursiveDifference(toFieldSet(r.config, scope.type), scope.ignored), STRIPPED);
  managers.set(key, {
    manager: r.manager,
    operation: 'Apply',
    apiVersion: scope.apiVersion,
    subresource: scope.subresource,
    time: prev?.time,
    set: applied,
  });

  let merged = merge(live, r.config, scope.type) as KubeObject;
  if (prev && !prev.set.isEmpty()) {
    let owned = new FieldSet();
    for (const e of managers.values()) owned = union(owned, e.set);
    const prune = difference(
      ensureNamedFieldsAreMembers(prev.set, scope.type),
      ensureNamedFieldsAreMembers(owned, scope.type),
    );
    if (!prune.isEmpty()) merged = (removeItems(merged, prune, scope.type) ?? { metadata: {} }) as KubeObject;
  }

  const c = compare(live, merged, scope.type, scope.ignored);
  const changed = union(c.modified, c.added);
  const conflicts: Conflict[] = [];
  for (const [k, e] of managers) {
    if (k === key) continue;
    for (const path of intersection(e.set, changed).paths()) conflicts.push({ entry: e, path });
  }
  if (conflicts.length && !r.force && !upgradesClientSideApply(scope, r, conflicts)) throw conflictError(conflicts);
  for (const [k, e] of managers) if (k !== key) e.set = difference(difference(e.set, changed), c.removed);
  const entry = managers.get(key)!;
  if (!entry.time || !changed.isEmpty() || !c.removed.isEmpty()) entry.time = r.now;

  merged.metadata ??= {};
  const mf = encodeManagedFields(managers);
  if (mf) merged.metadata.managedFields = mf;
  else delete merged.metadata.managedFields;
  // kubectl's server-side apply keeps a client-side apply annotation in step with what it applied.
  if (r.manager === 'kubectl' && r.live?.metadata.annotations?.[LAST_APPLIED_ANNOTATION]) {
    merged.metadata.annotations = {
      ...(merged.metadata.annotations ?? {}),
      [LAST_APPLIED_ANNOTATION]: lastAppliedOf(r.config),
    };
  }
  return merged;
}

/** The apply body is unusable (400). */
export class ApplyBadRequest extends Error {}

/**
 * kubectl switching from client-side to server-side apply: conflicts on fields its last-applied
 * annotation holds with the live value are its own, so the apply takes them (kube's lastAppliedManager).
 */
function upgradesClientSideApply(scope: FieldManagerScope, r: ApplyRequest, conflicts: readonly Conflict[]): boolean {
  if (r.manager !== 'kubectl' || !r.live) return false;
  const raw = r.live.metadata.annotations?.[LAST_APPLIED_ANNOTATION];
  if (!raw) return false;
  let last: unknown;
  try {
    last = JSON.parse(raw);
  } catch {
    return false;
  }
  if (!last || typeof last !== 'object' || (last as KubeObject).apiVersion !== scope.apiVersion) return false;
  const live = withoutManagedFields(r.live);
  const c = compare(last, live, scope.type);
  const allowed = difference(difference(difference(toFieldSet(last, scope.type), c.modified), c.added), c.removed);
  return conflicts.every((x) => allowed.has(x.path));
}

function lastAppliedOf(config: KubeObject): string {
  const copy = structuredClone(config);
  if (copy.metadata?.annotations) {
    delete copy.metadata.annotations[LAST_APPLIED_ANNOTATION];
    if (Object.keys(copy.metadata.annotations).length === 0) delete copy.metadata.annotations;
  }
  return `${JSON.stringify(sortKeys(copy))}\n`;
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return Object.fromEntries(
      Object.keys(o)
        .sort()
        .map((k) => [k, sortKeys(o[k])]),
    );
  }
  return v;
}

/** kube's printManager: an Apply manager by name, an Update manager with its version and time. */
function printManager(e: ManagerEntry): string {
  let s = JSON.stringify(e.manager);
  if (e.subresource) s += ` with subresource ${JSON.stringify(e.subresource)}`;
  if (e.operation === 'Update')
    return e.time ? `${s} using ${e.apiVersion} at ${e.time}` : `${s} using ${e.apiVersion}`;
  return s;
}

/** 409 Conflict with one FieldManagerConflict cause per field, and kube's message. */
function conflictError(conflicts: readonly Conflict[]): ApiConflictError {
  const causes = conflicts.map((c) => ({
    type: 'FieldManagerConflict',
    message: `conflict with ${printManager(c.entry)}`,
    field: pathString(c.path),
  }));
  let message: string;
  if (conflicts.length === 1) {
    message = `Apply failed with 1 conflict: conflict with ${printManager(conflicts[0]!.entry)}: ${pathString(conflicts[0]!.path)}`;
  } else {
    const byManager = new Map<string, { entry: ManagerEntry; paths: string[] }>();
    for (const c of conflicts) {
      const k = managerKey(c.entry.manager, c.entry.operation, c.entry.apiVersion, c.entry.subresource);
      const g = byManager.get(k) ?? { entry: c.entry, paths: [] };
      g.paths.push(pathString(c.path));
      byManager.set(k, g);
    }
    const lines: string[] = [];
    for (const k of [...byManager.keys()].sort()) {
      const g = byManager.get(k)!;
      lines.push(`conflicts with ${printManager(g.entry)}:`, ...g.paths.map((p) => `- ${p}`));
    }
    message = `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
  }
  return new ApiConflictError(message, { causes });
}
