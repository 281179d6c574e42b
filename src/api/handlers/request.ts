/** A resource request as the handlers see it, and the query parameters they share. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { readBody } from '../http.js';
import type { Store } from '../../store/store.js';
import type { Authorizer, UserInfo } from '../authz.js';
import type { ResponseFormat } from '../negotiation.js';
import type { ApiRegistry, ResourceStorage } from '../registry.js';
import type { KubeObject } from '../resources/types.js';
import {
  fieldSelectorRequirements,
  matchesFields,
  matchesLabels,
  parseFieldSelector,
  parseLabelSelector,
} from '../../kube/selectors.js';
import { badRequest, invalid, pathNotFound } from '../status.js';
import type { IncludeObject } from '../table.js';

/** A request for a resource, parsed from its URL. */
export interface ResourceRequest {
  readonly storage: ResourceStorage;
  /** Namespace from the URL (undefined for cluster-scoped or all-namespace requests). */
  readonly namespace?: string;
  readonly name?: string;
  readonly subresource?: string;
  readonly query: URLSearchParams;
  /** Watch asked through the legacy `/watch/` path prefix. */
  readonly legacyWatch: boolean;
}

/**
 * Parses the part of a resource URL after the group-version:
 * `[watch/][namespaces/<ns>/]<plural>[/<name>[/<subresource>]]`. Unknown resources are 404.
 */
export function parseResourcePath(
  registry: ApiRegistry,
  group: string,
  version: string,
  segs: readonly string[],
  query: URLSearchParams,
): ResourceRequest {
  let legacyWatch = false;
  if (segs[0] === 'watch') {
    legacyWatch = true;
    segs = segs.slice(1);
  }
  let namespace: string | undefined;
  if (segs[0] === 'namespaces' && segs.length >= 3) {
    const inner = registry.byGroupVersionPlural(group, version, segs[2]!);
    if (inner && inner.def.namespaced) {
      namespace = segs[1];
      segs = segs.slice(2);
    }
  }
  const storage = registry.byGroupVersionPlural(group, version, segs[0] ?? '');
  if (!storage || segs.length > 3) throw pathNotFound();
  return { storage, namespace, name: segs[1], subresource: segs[2], query, legacyWatch };
}

/** What every resource handler gets: the parsed request, the HTTP exchange, the store. */
export interface ResourceCall {
  readonly r: ResourceRequest;
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly store: Store;
  /** The negotiated response format (406 was answered before a handler runs). */
  readonly format: ResponseFormat;
  /** Who asked (for the review kinds, which answer about the asker). */
  readonly user?: UserInfo;
  readonly authorizer: Authorizer;
}

/** A watch, asked by `?watch=true|1` or the legacy `/watch/` path. */
export function isWatch(r: ResourceRequest): boolean {
  return r.legacyWatch || r.query.get('watch') === 'true' || r.query.get('watch') === '1';
}

export function apiVersionOf(r: ResourceRequest): string {
  const d = r.storage.def;
  return d.group ? `${d.group}/${d.version}` : d.version;
}

/** The label and field selectors of a list, watch or deletecollection. */
export interface Selection {
  matches(obj: KubeObject): boolean;
  readonly everything: boolean;
}

export function selection(r: ResourceRequest): Selection {
  const def = r.storage.def;
  const lsRaw = r.query.get('labelSelector') ?? '';
  const fsRaw = r.query.get('fieldSelector') ?? '';
  const ls = lsRaw ? parseLabelSelector(lsRaw) : undefined;
  const fs = fsRaw ? parseFieldSelector(fsRaw) : undefined;
  if (fs) {
    for (const { field: f } of fieldSelectorRequirements(fs)) {
      if (f !== 'metadata.name' && f !== 'metadata.namespace' && !(f in def.fieldSelectors)) {
        throw badRequest(`field label not supported: ${f}`);
      }
    }
  }
  const fieldValue = (obj: KubeObject, f: string): string | undefined => {
    if (f === 'metadata.name') return obj.metadata.name ?? '';
    if (f === 'metadata.namespace') return obj.metadata.namespace ?? '';
    const get = def.fieldSelectors[f];
    return get ? get(obj) : undefined;
  };
  return {
    everything: !ls && !fs,
    matches: (obj) =>
      (!ls || matchesLabels(ls, obj.metadata.labels)) && (!fs || matchesFields(fs, (f) => fieldValue(obj, f))),
  };
}

export function includeObject(q: URLSearchParams): IncludeObject {
  const v = q.get('includeObject');
  return v === 'None' || v === 'Object' ? v : 'Metadata';
}

export function parseLimit(q: URLSearchParams): number {
  const s = q.get('limit');
  if (!s) return 0;
  const n = Number(s);
  if (!Number.isInteger(n) || n < 0) throw badRequest(`invalid limit: ${s}`);
  return n;
}

export function parseRv(s: string | null): number | undefined {
  if (s === null || s === '') return undefined;
  const n = Number(s);
  if (!Number.isInteger(n) || n < 0)
    throw badRequest(`Invalid value: "${s}": resourceVersion must be a non-negative integer`);
  return n;
}

export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

export function fieldValidation(q: URLSearchParams): FieldValidation {
  const v = q.get('fieldValidation') ?? 'Warn';
  if (v !== 'Strict' && v !== 'Warn' && v !== 'Ignore') {
    throw badRequest(`fieldValidation: Unsupported value: "${v}": supported values: "Ignore", "Strict", "Warn"`);
  }
  return v;
}

export function dryRun(q: URLSearchParams): boolean {
  const v = q.getAll('dryRun');
  for (const x of v) if (x !== 'All') throw badRequest(`dryRun: Unsupported value: "${x}": supported values: "All"`);
  return v.length > 0;
}

/** kube's limit on a field manager's name (validation.FieldManagerMaxLength). */
const FIELD_MANAGER_MAX_LENGTH = 128;

export type WriteOptionsKind = 'CreateOptions' | 'UpdateOptions' | 'PatchOptions';

/** kube's 422 for write options it refuses (ValidateCreateOptions and the like). */
export function invalidOptions(kind: WriteOptionsKind, field: string, type: string, message: string): Error {
  const cause = { type, field, message };
  return invalid(kind, 'meta.k8s.io', '', [cause], `${kind}.meta.k8s.io "" is invalid: ${field}: ${message}`);
}

/**
 * The manager of a write (kube's managerOrUserAgent): the `fieldManager` parameter (refused as
 * kube's ValidateFieldManager does: too long, or not printable), else the User-Agent up to its
 * first `/`, printable characters only, cut at 128 bytes.
 */
export function writeManager(r: ResourceRequest, userAgent: string | undefined, kind: WriteOptionsKind): string {
  const m = r.query.get('fieldManager') ?? '';
  if (Buffer.byteLength(m) > FIELD_MANAGER_MAX_LENGTH)
    throw invalidOptions(
      kind,
      'fieldManager',
      'FieldValueTooLong',
      `Too long: may not be more than ${FIELD_MANAGER_MAX_LENGTH} bytes`,
    );
  if (/\p{C}/u.test(m))
    throw invalidOptions(
      kind,
      'fieldManager',
      'FieldValueInvalid',
      `Invalid value: ${JSON.stringify(m)}: must only contain printable characters`,
    );
  if (m) return m;
  let out = '';
  for (const ch of (userAgent ?? '').split('/')[0] ?? '') {
    if (/\p{C}/u.test(ch)) continue;
    if (Buffer.byteLength(out + ch) > FIELD_MANAGER_MAX_LENGTH) break;
    out += ch;
  }
  return out;
}

/** A PATCH body, parsed (400 for anything but JSON). */
export async function readPatchBody(req: IncomingMessage): Promise<unknown> {
  const raw = await readBody(req);
  try {
    return JSON.parse(raw.toString('utf8')) as unknown;
  } catch (e) {
    throw badRequest(`error decoding patch: ${(e as Error).message}`);
  }
}

/** The resourceVersion a patch names, if any: only then is it a precondition. */
export function patchResourceVersion(patch: unknown): unknown {
  return (patch as { metadata?: { resourceVersion?: unknown } } | null)?.metadata?.resourceVersion;
}
