import { createHash } from 'node:crypto';
import type { Schema } from '../resources/types.js';
import { definitionNameFor, definitions } from './schemas.js';
import { buildCreateOnlyPaths, buildPaths } from './paths.js';
import { SCALE_KIND } from '../resources/scale.js';
import type { OpenApiResource } from './resource.js';

export type { OpenApiResource } from './resource.js';

/** A create-only virtual kind (the reviews): one POST operation, no List kind. */
export function createOnly(r: OpenApiResource): boolean {
  return r.verbs?.length === 1 && r.verbs[0] === 'create';
}

/** Kubernetes version reported in each document's `info`. */
export const OPENAPI_INFO = { title: 'Kubernetes', version: 'v1.30.0' } as const;

/** `api/v1` for the core group, `apis/<group>/<version>` otherwise (the /openapi/v3 index keys). */
export function groupVersionPath(group: string, version: string): string {
  return group === '' ? `api/${version}` : `apis/${group}/${version}`;
}

export interface OpenApiV3Entry {
  /** The OpenAPI 3.0 document (shared; do not mutate). */
  readonly document: Readonly<Record<string, unknown>>;
  /** Its JSON serialisation, what the server sends. */
  readonly json: string;
  /** Upper-case hex SHA-512 of `json`, as kube-apiserver's `?hash=` and ETag. */
  readonly hash: string;
}

/** /openapi/v3 for one set of served resources: the index and one document per group-version. */
export interface OpenApiV3 {
  /** `GET /openapi/v3`: `{paths: {"api/v1": {serverRelativeURL: "/openapi/v3/api/v1?hash=…"}, …}}`. */
  index(): Readonly<Record<string, unknown>>;
  /** `GET /openapi/v3/<gvPath>` (gvPath without the leading slash), or undefined when not served. */
  entry(gvPath: string): OpenApiV3Entry | undefined;
}

/** Builds the documents once; they depend only on the resources and the generated schemas. */
export function buildOpenApiV3(resources: readonly OpenApiResource[]): OpenApiV3 {
  const byGv = new Map<string, OpenApiResource[]>();
  for (const r of resources) {
    const key = groupVersionPath(r.group, r.version);
    const list = byGv.get(key) ?? [];
    list.push(r);
    byGv.set(key, list);
  }
  const entries = new Map<string, OpenApiV3Entry>();
  for (const [gvPath, rs] of [...byGv].sort(([a], [b]) => a.localeCompare(b))) {
    const document = buildDocument(rs);
    const json = JSON.stringify(document);
    entries.set(gvPath, { document, json, hash: createHash('sha512').update(json).digest('hex').toUpperCase() });
  }
  const paths: Record<string, { serverRelativeURL: string }> = {};
  for (const [gvPath, e] of entries) paths[gvPath] = { serverRelativeURL: `/openapi/v3/${gvPath}?hash=${e.hash}` };
  const index = { paths };
  return { index: () => index, entry: (gvPath) => entries.get(gvPath.replace(/^\/+/, '')) };
}

const built = new WeakMap<readonly OpenApiResource[], OpenApiV3>();
function cached(resources: readonly OpenApiResource[]): OpenApiV3 {
  let v = built.get(resources);
  if (!v) {
    v = buildOpenApiV3(resources);
    built.set(resources, v);
  }
  return v;
}

/** The /openapi/v3 index for `resources` (cached per resources array). */
export function openApiV3Index(resources: readonly OpenApiResource[]): object {
  return cached(resources).index();
}

/** The document of one group-version path (`api/v1`, `apis/storage.k8s.io/v1`), cached per resources array. */
export function openApiV3Document(resources: readonly OpenApiResource[], gvPath: string): object | undefined {
  return cached(resources).entry(gvPath)?.document;
}

/** Definitions every document's operations use besides the kinds themselves. */
const META = 'io.k8s.apimachinery.pkg.apis.meta.v1';
const PATCH_DEF: Schema = {
  description: 'Patch is provided to give a concrete name and type to the Kubernetes PATCH request body.',
  type: 'object',
};

/** The definitions a document serving `rs` starts from: each kind, its list, and the meta types of every operation. */
export function definitionRoots(rs: readonly OpenApiResource[]): string[] {
  const roots = [`${META}.Status`, `${META}.DeleteOptions`, `${META}.WatchEvent`];
  for (const r of rs) {
    roots.push(definitionNameFor(r.group, r.version, r.kind));
    if (!createOnly(r)) roots.push(definitionNameFor(r.group, r.version, `${r.kind}List`));
    if (r.subresources?.some((s) => s.type === 'scale'))
      roots.push(definitionNameFor(SCALE_KIND.group, SCALE_KIND.version, SCALE_KIND.kind));
  }
  return roots;
}

function buildDocument(rs: readonly OpenApiResource[]): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  for (const r of [...rs].sort((a, b) => a.plural.localeCompare(b.plural))) {
    const kindDef = definitionNameFor(r.group, r.version, r.kind);
    Object.assign(
      paths,
      createOnly(r)
        ? buildCreateOnlyPaths(r, kindDef)
        : buildPaths(r, kindDef, definitionNameFor(r.group, r.version, `${r.kind}List`)),
    );
  }
  const schemas: Record<string, Schema> = {
    ...publishedV3(definitionClosure(definitionRoots(rs))),
    [`${META}.Patch`]: PATCH_DEF,
  };
  const sorted = Object.fromEntries(
    Object.keys(schemas)
      .sort()
      .map((k) => [k, schemas[k]]),
  );
  return { openapi: '3.0.0', info: { ...OPENAPI_INFO }, paths, components: { schemas: sorted } };
}

export const QUANTITY = 'io.k8s.apimachinery.pkg.api.resource.Quantity';
export const INT_OR_STRING = 'io.k8s.apimachinery.pkg.util.intstr.IntOrString';

/**
 * Definitions as kube-apiserver publishes them in /openapi/v3: Quantity and IntOrString carry no
 * `type` but a `oneOf` of their scalar forms (kube-openapi's OpenAPIV3OneOfTypes), which is what
 * makes `kubectl explain` print `<Quantity>` and `<IntOrString>` rather than `<string>`.
 */
function publishedV3(defs: Record<string, Schema>): Record<string, Schema> {
  const out = { ...defs };
  const q = out[QUANTITY];
  if (q) out[QUANTITY] = { description: q.description, oneOf: [{ type: 'string' }, { type: 'number' }] };
  const ios = out[INT_OR_STRING];
  if (ios)
    out[INT_OR_STRING] = {
      description: ios.description,
      format: 'int-or-string',
      oneOf: [{ type: 'integer' }, { type: 'string' }],
    };
  return out;
}

/** The named definitions and everything they reference (v3 form). */
export function definitionClosure(roots: readonly string[]): Record<string, Schema> {
  const defs = definitions();
  const out: Record<string, Schema> = {};
  const todo = [...roots];
  while (todo.length) {
    const name = todo.pop() as string;
    if (name in out) continue;
    const def = defs[name];
    if (!def) throw new Error(`unknown definition ${name}`);
    out[name] = def;
    collectRefs(def, todo);
  }
  return out;
}

function collectRefs(s: unknown, into: string[]): void {
  if (Array.isArray(s)) {
    for (const x of s) collectRefs(x, into);
  } else if (s && typeof s === 'object') {
    for (const [k, v] of Object.entries(s)) {
      if (k === '$ref' && typeof v === 'string') into.push(v.replace('#/components/schemas/', ''));
      else collectRefs(v, into);
    }
  }
}
