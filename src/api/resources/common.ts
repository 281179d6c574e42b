import type { FieldCause } from '../../util/errors.js';
import type { PatchMeta } from '../patch/types.js';
import { patchMetaFor, schemaFor } from '../openapi/schemas.js';
import { canonicalQuantity } from '../../kube/quantity.js';
import type {
  AdmissionContext,
  FieldSelectorFields,
  KubeObject,
  ResourceDef,
  Schema,
  SubresourceDef,
  TableColumn,
} from './types.js';

/**
 * Shared helpers of the resource definitions: field errors and Kubernetes' Invalid message, name
 * and metadata validation, quantities, AGE printing, the generic status-subresource strategy and
 * `baseResourceDef` that fills in everything a kind does not customise.
 */

export * from './fielderrors.js';
export * from './names.js';
export * from '../../kube/quantity.js';
export * from './selectorvalidation.js';

// ---------------------------------------------------------------------------------------------
// Reading JSON objects whose shape has not been checked yet.

export type JsonObject = Record<string, unknown>;

export function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The object at `v`, or undefined for anything else (null, arrays, scalars). */
export function obj(v: unknown): JsonObject | undefined {
  return isObject(v) ? v : undefined;
}

export function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

export function bool(v: unknown): boolean | undefined {
  return typeof v === 'boolean' ? v : undefined;
}

export function arr(v: unknown): unknown[] | undefined {
  return Array.isArray(v) ? v : undefined;
}

/** The object at `o[key]`, created (and stored) when missing or not an object. */
export function ensureObject(o: JsonObject, key: string): JsonObject {
  const cur = o[key];
  if (isObject(cur)) return cur;
  const fresh: JsonObject = {};
  o[key] = fresh;
  return fresh;
}

/**
 * Rewrites every quantity in a resource map (`{storage: "1.5Gi"}`) to its canonical text
 * (`1536Mi`), as a Kubernetes decode/encode round trip does. Unparseable values stay for
 * validation to report.
 */
export function canonicalizeQuantities(map: unknown): void {
  if (!isObject(map)) return;
  for (const [k, v] of Object.entries(map)) map[k] = canonicalQuantity(v);
}

function clone<T>(v: T): T {
  return v === undefined ? v : structuredClone(v);
}

// ---------------------------------------------------------------------------------------------
// AGE column.

/**
 * `duration.HumanDuration` of k8s.io/apimachinery: the AGE kubectl shows, e.g. `45s`, `3m12s`,
 * `2d5h`. Up to 2 s in the future still reads `0s` (clock skew); beyond that `<invalid>`.
 */
export function humanDuration(ms: number): string {
  const seconds = Math.trunc(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 60 * 2) return `${seconds}s`;
  const minutes = Math.trunc(seconds / 60);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 60 * 3) return `${minutes}m`;
  const hours = Math.trunc(minutes / 60);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${Math.trunc(hours / 24)}d` : `${Math.trunc(hours / 24)}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${Math.trunc(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const dy = Math.trunc(hours / 24) % 365;
    const y = Math.trunc(hours / 24 / 365);
    return dy === 0 ? `${y}y` : `${y}y${dy}d`;
  }
  return `${Math.trunc(hours / 24 / 365)}y`;
}

/** The printers' `translateTimestampSince`: `<unknown>` without a timestamp. `now` in ms since epoch. */
export function ageString(creationTimestamp: string | undefined, now: number): string {
  if (!creationTimestamp) return '<unknown>';
  const t = Date.parse(creationTimestamp);
  if (Number.isNaN(t)) return '<unknown>';
  return humanDuration(now - t);
}

// ---------------------------------------------------------------------------------------------
// Table columns.

const NAME_DESCRIPTION =
  'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names';
const AGE_DESCRIPTION =
  'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata';

export const NAME_COLUMN: TableColumn = {
  name: 'Name',
  type: 'string',
  format: 'name',
  description: NAME_DESCRIPTION,
  priority: 0,
};
export const AGE_COLUMN: TableColumn = {
  name: 'Age',
  type: 'string',
  format: '',
  description: AGE_DESCRIPTION,
  priority: 0,
};

/** A column as the printers declare it; `priority` 1 = shown only with -o wide. */
export function column(
  name: string,
  type: TableColumn['type'],
  description: string,
  priority = 0,
  format = '',
): TableColumn {
  return { name, type, format, description, priority };
}

// ---------------------------------------------------------------------------------------------
// Generic strategy pieces.

/** Main-resource update of a kind with a status subresource: the status is the stored one. */
export function keepOldStatus(o: KubeObject, old: KubeObject): void {
  if (old.status === undefined) delete o.status;
  else o.status = clone(old.status);
}

/**
 * `/status` update: everything but `status` comes from the stored object. With `resetMeta`
 * (kube's `ResetObjectMetaForStatus`) labels, annotations, finalizers, owners and the like stay
 * too; without it metadata changes made through /status are kept, as the PV/PVC strategies do.
 */
export function keepAllButStatus(o: KubeObject, old: KubeObject, opts: { resetMeta?: boolean } = {}): void {
  for (const k of Object.keys(o)) {
    if (k !== 'metadata' && k !== 'status' && !(k in old)) delete o[k];
  }
  for (const [k, v] of Object.entries(old)) {
    if (k !== 'metadata' && k !== 'status') o[k] = clone(v);
  }
  if (opts.resetMeta) {
    const keep = [
      'deletionTimestamp',
      'generation',
      'selfLink',
      'labels',
      'annotations',
      'finalizers',
      'ownerReferences',
    ] as const;
    for (const k of keep) {
      const v: unknown = old.metadata[k];
      if (v === undefined) delete o.metadata[k];
      else (o.metadata as Record<string, unknown>)[k] = clone(v);
    }
  }
}

/** Adds a finalizer unless present (the storage-object-in-use-protection admission plugin). */
export function addFinalizer(o: KubeObject, finalizer: string): void {
  const list = o.metadata.finalizers ?? [];
  if (!list.includes(finalizer)) o.metadata.finalizers = [...list, finalizer];
}

export const DEFAULT_VERBS = [
  'create',
  'delete',
  'deletecollection',
  'get',
  'list',
  'patch',
  'update',
  'watch',
] as const;

/** What a kind supplies to `baseResourceDef`; every hook is optional. */
export interface ResourceSpecifics {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly plural: string;
  readonly namespaced: boolean;
  readonly hasStatus: boolean;
  readonly shortNames?: readonly string[];
  readonly categories?: readonly string[];
  readonly verbs?: readonly string[];
  readonly fieldSelectors?: FieldSelectorFields;
  /** Subresources beyond /status (scale, …). */
  readonly subresources?: readonly SubresourceDef[];
  readonly columns: readonly TableColumn[];
  row(o: KubeObject, now: number): unknown[];
  /** Defaulting, applied on every write (Kubernetes defaults on decode). */
  defaults?(o: KubeObject): void;
  prepareForCreate?(o: KubeObject, ctx: AdmissionContext): void;
  /** Runs after the generic part (old status kept when hasStatus, defaults applied). */
  prepareForUpdate?(o: KubeObject, old: KubeObject, ctx: AdmissionContext): void;
  /** Runs after the generic part (all but status kept, defaults applied). */
  prepareForStatusUpdate?(o: KubeObject, old: KubeObject, ctx: AdmissionContext): void;
  /** Mutating admission plugins of the kind (see ResourceDef.mutatingAdmission). */
  mutatingAdmission?(o: KubeObject, old: KubeObject | undefined, ctx: AdmissionContext): void;
  /** Whether /status keeps labels, annotations, finalizers... from the stored object. */
  readonly statusResetsMeta?: boolean;
  validateCreate(o: KubeObject, ctx: AdmissionContext): FieldCause[];
  validateUpdate(o: KubeObject, old: KubeObject, ctx: AdmissionContext): FieldCause[];
  validateStatusUpdate?(o: KubeObject, old: KubeObject, ctx: AdmissionContext): FieldCause[];
}

/**
 * A ResourceDef from the parts that differ between kinds. The schema and patch metadata come from
 * the generated OpenAPI definitions, loaded on first use.
 */
export function baseResourceDef(s: ResourceSpecifics): ResourceDef {
  let schema: Schema | undefined;
  let patch: ((path: readonly string[]) => PatchMeta) | undefined;
  const defaults = (o: KubeObject): void => s.defaults?.(o);
  return {
    group: s.group,
    version: s.version,
    kind: s.kind,
    listKind: `${s.kind}List`,
    plural: s.plural,
    singular: s.kind.toLowerCase(),
    namespaced: s.namespaced,
    shortNames: s.shortNames ?? [],
    categories: s.categories ?? [],
    hasStatus: s.hasStatus,
    verbs: s.verbs ?? DEFAULT_VERBS,
    get schema(): Schema {
      schema ??= schemaFor(s.group, s.version, s.kind);
      return schema;
    },
    fieldSelectors: s.fieldSelectors ?? {},
    ...(s.subresources ? { subresources: s.subresources } : {}),
    columns: s.columns,
    row: (o, now) => s.row(o, now),
    prepareForCreate(o, ctx) {
      defaults(o);
      s.prepareForCreate?.(o, ctx);
    },
    prepareForUpdate(o, old, ctx) {
      if (s.hasStatus) keepOldStatus(o, old);
      defaults(o);
      s.prepareForUpdate?.(o, old, ctx);
    },
    prepareForStatusUpdate(o, old, ctx) {
      keepAllButStatus(o, old, { resetMeta: s.statusResetsMeta ?? false });
      defaults(o);
      s.prepareForStatusUpdate?.(o, old, ctx);
    },
    ...(s.defaults ? { defaults } : {}),
    ...(s.mutatingAdmission ? { mutatingAdmission: s.mutatingAdmission.bind(s) } : {}),
    validateCreate: (o, ctx) => s.validateCreate(o, ctx),
    validateUpdate: (o, old, ctx) => s.validateUpdate(o, old, ctx),
    validateStatusUpdate: (o, old, ctx) => (s.validateStatusUpdate ?? s.validateUpdate)(o, old, ctx),
    patchMeta(path) {
      patch ??= patchMetaFor(s.group, s.version, s.kind);
      return patch(path);
    },
  };
}
