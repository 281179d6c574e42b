/**
 * The structural-schema rules a CRD version's openAPIV3Schema must follow (apiextensions'
 * ValidateCustomResourceDefinitionOpenAPISchema and the structural checks), with kube's paths
 * and messages. Paths are under `spec.versions[i].schema.openAPIV3Schema`.
 */
import type { FieldCause } from '../../../util/errors.js';
import { forbidden, invalid, required, notSupported } from '../../resources/fielderrors.js';
import { additionalOf, isPlainObject, type JSONSchemaProps } from './types.js';
import { validateValue } from './validate.js';

const TYPES = ['array', 'boolean', 'integer', 'number', 'object', 'string'];

interface Ctx {
  readonly out: FieldCause[];
}

/** The rules of a whole version schema. `path` is `spec.versions[i].schema.openAPIV3Schema`. */
export function validateStructuralSchema(root: JSONSchemaProps, path: string): FieldCause[] {
  const ctx: Ctx = { out: [] };
  if (root.type !== 'object') {
    if (root.type === undefined) ctx.out.push(required(`${path}.type`, 'must not be empty at the root'));
    else ctx.out.push(invalid(`${path}.type`, root.type, 'must be object at the root'));
  }
  if (root.nullable) ctx.out.push(forbidden(`${path}.nullable`, 'must be false at the root'));
  node(root, path, ctx, true, false);
  const meta = root.properties?.metadata;
  if (meta) validateRootMetadata(meta, `${path}.properties[metadata]`, ctx);
  return ctx.out;
}

/** At the root, metadata may only restrict name and generateName (kube: "must not specify anything other than name and generateName"). */
function validateRootMetadata(meta: JSONSchemaProps, path: string, ctx: Ctx): void {
  const props = Object.keys(meta.properties ?? {}).filter((k) => k !== 'name' && k !== 'generateName');
  if (props.length)
    ctx.out.push(
      forbidden(
        path,
        'must not specify anything other than name and generateName, but metadata is implicitly specified',
      ),
    );
  if (meta.type !== undefined && meta.type !== 'object')
    ctx.out.push(invalid(`${path}.type`, meta.type, 'must be object'));
}

function node(s: JSONSchemaProps, path: string, ctx: Ctx, root: boolean, underValueValidation: boolean): void {
  const out = ctx.out;
  if (!isPlainObject(s)) return;
  if (s.$ref !== undefined) out.push(forbidden(`${path}.$ref`, '$ref is not supported'));
  if (s['x-kubernetes-validations'] !== undefined) {
    out.push(
      forbidden(
        `${path}.x-kubernetes-validations`,
        'CEL validation rules are not supported by this server (Stowage has no CEL evaluator): remove x-kubernetes-validations',
      ),
    );
  }
  if (s.type !== undefined && !TYPES.includes(s.type)) out.push(notSupported(`${path}.type`, s.type, TYPES));
  const intOrString = s['x-kubernetes-int-or-string'] === true;
  const preserve = s['x-kubernetes-preserve-unknown-fields'] === true;
  const embedded = s['x-kubernetes-embedded-resource'] === true;
  if (!underValueValidation && s.type === undefined && !intOrString && !preserve && !root) {
    out.push(required(`${path}.type`, 'must not be empty for specified object fields'));
  }
  if (intOrString && s.type !== undefined)
    out.push(invalid(`${path}.type`, s.type, 'must be empty if x-kubernetes-int-or-string is true'));
  if (embedded && s.type !== 'object')
    out.push(invalid(`${path}.type`, s.type ?? '', 'must be object if x-kubernetes-embedded-resource is true'));
  if (preserve && s['x-kubernetes-preserve-unknown-fields'] === false)
    out.push(invalid(`${path}.x-kubernetes-preserve-unknown-fields`, false, 'must be true or undefined'));
  if (s.properties && s.additionalProperties !== undefined && s.additionalProperties !== false)
    out.push(forbidden(`${path}.additionalProperties`, 'additionalProperties and properties are mutual exclusive'));
  if (s.type === 'array' && s.items === undefined) out.push(required(`${path}.items`, 'must be specified'));
  if (Array.isArray(s.items)) out.push(forbidden(`${path}.items`, 'items must be a schema object and not an array'));
  if (underValueValidation && (s.default !== undefined || s.description !== undefined || s.nullable !== undefined)) {
    for (const f of ['default', 'description', 'nullable'] as const)
      if (s[f] !== undefined) out.push(forbidden(`${path}.${f}`, 'must be undefined to be structural'));
  }
  listType(s, path, out);
  if (s.default !== undefined && !underValueValidation) defaultValid(s, path, out);
  for (const [k, p] of Object.entries(s.properties ?? {}))
    node(p, `${path}.properties[${k}]`, ctx, false, underValueValidation);
  const add = additionalOf(s);
  if (add) node(add, `${path}.additionalProperties`, ctx, false, underValueValidation);
  if (isPlainObject(s.items)) node(s.items as JSONSchemaProps, `${path}.items`, ctx, false, underValueValidation);
  for (const j of ['allOf', 'anyOf', 'oneOf'] as const)
    (s[j] ?? []).forEach((x, i) => node(x, `${path}.${j}[${i}]`, ctx, false, true));
  if (s.not) node(s.not, `${path}.not`, ctx, false, true);
}

function listType(s: JSONSchemaProps, path: string, out: FieldCause[]): void {
  const lt = s['x-kubernetes-list-type'];
  const keys = s['x-kubernetes-list-map-keys'];
  if (lt !== undefined) {
    if (!['atomic', 'set', 'map'].includes(lt))
      out.push(notSupported(`${path}.x-kubernetes-list-type`, lt, ['atomic', 'set', 'map']));
    if (s.type !== 'array')
      out.push(invalid(`${path}.type`, s.type ?? '', 'must be array if x-kubernetes-list-type is specified'));
  }
  if (lt === 'map') {
    if (!keys?.length)
      out.push(required(`${path}.x-kubernetes-list-map-keys`, 'must not be empty if x-kubernetes-list-type is map'));
    const items = isPlainObject(s.items) ? (s.items as JSONSchemaProps) : undefined;
    if (items && items.type !== 'object')
      out.push(
        invalid(
          `${path}.items.type`,
          items.type ?? '',
          "must be object if parent array's x-kubernetes-list-type is map",
        ),
      );
    for (const k of keys ?? []) {
      const ks = items?.properties?.[k];
      if (!ks)
        out.push(
          invalid(
            `${path}.items.properties`,
            k,
            'entries specified in x-kubernetes-list-map-keys must be properties of the items',
          ),
        );
      else if (ks.type !== 'string' && ks.type !== 'integer' && ks.type !== 'number' && ks.type !== 'boolean')
        out.push(
          invalid(
            `${path}.items.properties[${k}].type`,
            ks.type ?? '',
            "must be a scalar type if parent array's x-kubernetes-list-type is map",
          ),
        );
      else if (!items?.required?.includes(k) && ks.default === undefined)
        out.push(required(`${path}.items.required`, `must include ${k} or it must have a default`));
    }
  } else if (keys !== undefined) {
    out.push(forbidden(`${path}.x-kubernetes-list-map-keys`, 'must only be used if x-kubernetes-list-type is map'));
  }
  if (s['x-kubernetes-map-type'] !== undefined && !['atomic', 'granular'].includes(s['x-kubernetes-map-type']))
    out.push(notSupported(`${path}.x-kubernetes-map-type`, s['x-kubernetes-map-type'], ['granular', 'atomic']));
}

/** A default must itself validate against its schema (kube checks it after pruning). */
function defaultValid(s: JSONSchemaProps, path: string, out: FieldCause[]): void {
  const errs: FieldCause[] = [];
  validateValue(s.default, s, `${path}.default`, errs);
  for (const e of errs) out.push({ ...e, field: e.field.startsWith(path) ? e.field : `${path}.default` });
}
