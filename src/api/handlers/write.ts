/** Writes: POST (create), PUT (update), PATCH, and POST to an action subresource (pods/binding). */
import { fieldPathSegments } from '../fieldmanager/fieldset.js';
import { decodeBody, readBody, sendAs, sendJson } from '../http.js';
import { findUnknownFields, findUnknownFieldsIn, strictDecodingBadRequestMessage } from '../openapi/strict.js';
import { decodeTyped, type DecodeMode } from '../decode/index.js';
import { applyPatch, patchKindOf } from '../patch/index.js';
import type { ActionSubresource, KubeObject } from '../resources/types.js';
import { badRequest, forbidden, methodNotAllowed, pathNotFound, successStatus } from '../status.js';
import { UnsupportedMediaTypeError } from '../../util/errors.js';
import { handleScalePatch, handleScaleUpdate } from './scale.js';
import {
  apiVersionOf,
  dryRun,
  fieldValidation,
  invalidOptions,
  patchResourceVersion,
  readPatchBody,
  writeManager,
  type FieldValidation,
  type ResourceCall,
  type ResourceRequest,
} from './request.js';

/** A body admitted for a write, and the warnings to send with the answer. */
export interface AdmittedBody {
  readonly obj: KubeObject;
  readonly warnings: string[];
}

/** Where an object body comes from: kube reports a patch result's decoding errors differently (422). */
export type BodyOrigin = 'create' | 'update' | 'patch';

/**
 * The one place every decoded object body passes before the registry sees it: create and update
 * bodies (main resource and subresources) and each patch's result. Checks that it is an object of
 * the URL's kind and version, then unknown fields: Strict → 400, Warn → a Warning header per
 * field, Ignore → dropped silently. Unknown fields never reach the store.
 */
export function admitBody(
  r: ResourceRequest,
  body: unknown,
  o: { readonly fieldValidation: FieldValidation; readonly origin: BodyOrigin },
): AdmittedBody {
  const obj = asObject(body, r, o.origin === 'patch' ? 'patch' : 'body');
  return { obj, warnings: checkUnknownFields(r, obj, o.fieldValidation) };
}

/** The same for the body of an action subresource (a Binding): the kind's own check. */
export function admitActionBody(sub: ActionSubresource, body: unknown): void {
  decodeTyped(sub.bodyKind, body, 'body');
  sub.validateBody(body);
}

function asObject(body: unknown, r: ResourceRequest, mode: DecodeMode): KubeObject {
  if (!body || typeof body !== 'object' || Array.isArray(body))
    throw badRequest(
      'the body of the request was in an unknown format - accepted media types include: application/json, application/yaml',
    );
  const o = body as Record<string, unknown>;
  const d = r.storage.def;
  if (o.kind !== undefined && o.kind !== d.kind && !(r.subresource === undefined && o.kind === '')) {
    throw badRequest(
      `${d.kind} in version "${d.version}" cannot be handled as a ${d.kind}: the kind in the data (${String(o.kind)}) does not match the expected kind (${d.kind})`,
    );
  }
  if (o.apiVersion !== undefined && o.apiVersion !== apiVersionOf(r)) {
    throw badRequest(
      `the API version in the data (${String(o.apiVersion)}) does not match the expected API version (${apiVersionOf(r)})`,
    );
  }
  if (d.custom) d.custom.decode(o);
  else decodeTyped(d, o, mode);
  if (o.metadata === undefined || o.metadata === null) o.metadata = {};
  if (typeof o.metadata !== 'object' || Array.isArray(o.metadata)) throw badRequest('metadata must be an object');
  return o as KubeObject;
}

function checkUnknownFields(r: ResourceRequest, obj: KubeObject, mode: FieldValidation): string[] {
  const d = r.storage.def;
  const unknown = unknownFieldsOf(r, obj).map((p) => p.replace(/^\./, ''));
  if (!unknown.length) return [];
  if (mode === 'Strict') throw badRequest(strictDecodingBadRequestMessage(d.kind, d.version, unknown));
  pruneFields(obj, unknown);
  return mode === 'Warn' ? unknown.map((u) => `unknown field "${u}"`) : [];
}

/** Fields the kind's schema does not declare (a custom resource's: what pruning removes). */
export function unknownFieldsOf(r: ResourceRequest, obj: unknown): string[] {
  const d = r.storage.def;
  return d.custom ? findUnknownFieldsIn(obj, d.schema) : findUnknownFields(obj, d.group, d.version, d.kind);
}

/** Removes fields given as paths like `spec.foo` or `spec.containers[0].bar`. */
export function pruneFields(obj: unknown, paths: readonly string[]): void {
  for (const p of paths) {
    const segs = fieldPathSegments(p);
    let cur: unknown = obj;
    for (let i = 0; i < segs.length - 1 && cur && typeof cur === 'object'; i++)
      cur = (cur as Record<string | number, unknown>)[segs[i]!];
    if (cur && typeof cur === 'object' && !Array.isArray(cur))
      delete (cur as Record<string, unknown>)[String(segs[segs.length - 1])];
  }
}

export function warningHeaders(w: readonly string[]): Record<string, string[]> | undefined {
  if (!w.length) return undefined;
  return { Warning: w.map((x) => `299 - ${JSON.stringify(x)}`) };
}

/** The subresource a PUT or PATCH writes through: none, `status`, or a partial update such as `finalize`. */
export function updateSubresource(r: ResourceRequest): string | undefined {
  if (!r.subresource) return undefined;
  if (r.subresource === 'status' && r.storage.def.hasStatus) return 'status';
  if (r.storage.subresource(r.subresource)?.type === 'partialUpdate') return r.subresource;
  throw pathNotFound();
}

export async function handleCreate({ r, req, res, format, user, authorizer }: ResourceCall): Promise<void> {
  if (r.storage.def.namespaced && !r.namespace) throw methodNotAllowed();
  const { obj, warnings } = admitBody(r, decodeBody(await readBody(req), req.headers['content-type']), {
    fieldValidation: fieldValidation(r.query),
    origin: 'create',
  });
  const review = r.storage.def.review;
  if (review) {
    if (!user) throw forbidden('reviews need an authenticated user');
    r.storage.validateCreate(obj);
    sendAs(res, format, 201, JSON.stringify(review(obj, { user, authorizer })), warningHeaders(warnings));
    return;
  }
  const out = await r.storage.create(obj, r.namespace, {
    dryRun: dryRun(r.query),
    fields: { update: writeManager(r, req.headers['user-agent'], 'CreateOptions') },
  });
  sendAs(res, format, 201, JSON.stringify(out), warningHeaders(warnings));
}

export async function handleUpdate(call: ResourceCall): Promise<void> {
  const { r, req, res, format } = call;
  const scale = r.subresource ? r.storage.subresource(r.subresource) : undefined;
  if (scale?.type === 'scale') return handleScaleUpdate(call, scale);
  const sub = updateSubresource(r);
  const body = await readBody(req);
  const decode = (): unknown => decodeBody(body, req.headers['content-type']);
  const { obj, warnings } = admitBody(r, decode(), { fieldValidation: fieldValidation(r.query), origin: 'update' });
  // The registry takes ownership of what `next` returns; a retry after a race gets a fresh copy.
  let first = true;
  const next = (): KubeObject => {
    if (first) return ((first = false), obj);
    return admitBody(r, decode(), { fieldValidation: 'Ignore', origin: 'update' }).obj;
  };
  const fields = { update: writeManager(r, req.headers['user-agent'], 'UpdateOptions') };
  const out = await r.storage.update(r.namespace, r.name!, next, { dryRun: dryRun(r.query), subresource: sub, fields });
  sendAs(res, format, 200, JSON.stringify(out), warningHeaders(warnings));
}

/** PATCH with a json, merge or strategic-merge patch (server-side apply is handlers/apply.ts). */
export async function handlePatch(call: ResourceCall): Promise<void> {
  const { r, req, res, format } = call;
  const scale = r.subresource ? r.storage.subresource(r.subresource) : undefined;
  if (scale?.type === 'scale') return handleScalePatch(call, scale);
  const sub = updateSubresource(r);
  const ct = req.headers['content-type'] ?? '';
  if (r.query.has('force'))
    throw invalidOptions(
      'PatchOptions',
      'force',
      'FieldValueForbidden',
      'Forbidden: may not be specified for non-apply patch',
    );
  // Custom resources have no Go types to carry patch strategies: kube refuses strategic merge (415).
  if (r.storage.def.custom && patchKindOf(ct) === 'strategic') throw unsupportedPatchType();
  const patch = await readPatchBody(req);
  const validation = fieldValidation(r.query);
  let warnings: string[] = [];
  const out = await r.storage.update(
    r.namespace,
    r.name!,
    (cur) => {
      const patched = applyPatch(ct, cur, patch, r.storage.def.patchMeta.bind(r.storage.def));
      const admitted = admitBody(r, patched, { fieldValidation: validation, origin: 'patch' });
      // A patch that does not name a resourceVersion must not turn the current one into a precondition.
      if (patchResourceVersion(patch) === undefined) delete admitted.obj.metadata.resourceVersion;
      warnings = admitted.warnings;
      return admitted.obj;
    },
    {
      dryRun: dryRun(r.query),
      subresource: sub,
      fields: { update: writeManager(r, req.headers['user-agent'], 'PatchOptions') },
    },
  );
  sendAs(res, format, 200, JSON.stringify(out), warningHeaders(warnings));
}

function unsupportedPatchType(): Error {
  return new UnsupportedMediaTypeError(
    'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml',
  );
}

/** POST to an action subresource (pods/<name>/binding): the kind's hook computes the new object. */
export async function handleAction({ r, req, res }: ResourceCall, sub: ActionSubresource): Promise<void> {
  const body = decodeBody(await readBody(req), req.headers['content-type']);
  admitActionBody(sub, body);
  const name = r.name!;
  await r.storage.update(r.namespace, name, (current) => sub.apply(current, body, name), { fields: 'untracked' });
  sendJson(res, 201, successStatus());
}
