/**
 * Validation of a custom resource against its structural schema, with the field paths and
 * messages kube-apiserver answers (kube-openapi's validator as apiextensions-apiserver turns its
 * results into field errors): `spec.replicas: Invalid value: "string": spec.replicas in body must
 * be of type integer: "string"`, `spec.size: Unsupported value: "XL": supported values: "S", "M"`.
 */
import type { FieldCause } from '../../../util/errors.js';
import { duplicate, invalid, notSupported, required } from '../../resources/fielderrors.js';
import { CAUSE_TYPES } from '../../resources/fielderrors.js';
import { checkFormat } from './formats.js';
import { additionalOf, isPlainObject, itemsOf, type JSONSchemaProps } from './types.js';

/** The JSON type name kube-openapi reports for a value. */
function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

function typeMatches(type: string, v: unknown): boolean {
  switch (type) {
    case 'object':
      return isPlainObject(v);
    case 'array':
      return Array.isArray(v);
    case 'string':
      return typeof v === 'string';
    case 'boolean':
      return typeof v === 'boolean';
    case 'integer':
      return typeof v === 'number' && Number.isInteger(v);
    case 'number':
      return typeof v === 'number';
    default:
      return true;
  }
}

/** A Go `%#v`-like rendering of a map-list key, for Duplicate value causes. */
function goMapLiteral(keys: Record<string, unknown>): string {
  const parts = Object.entries(keys).map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`);
  return `map[string]interface {}{${parts.join(', ')}}`;
}

function tooMany(field: string, actual: number, max: number, what: string): FieldCause {
  return {
    type: CAUSE_TYPES.TooMany,
    field,
    message: `Too many: ${actual}: must have at most ${max} ${what}`,
  };
}

function tooLongString(field: string, max: number): FieldCause {
  return { type: CAUSE_TYPES.TooLong, field, message: `Too long: may not be longer than ${max}` };
}

function child(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

/** Validates `value` at `path` against `s`; appends causes to `out`. */
export function validateValue(value: unknown, s: JSONSchemaProps, path: string, out: FieldCause[]): void {
  if (value === undefined) return;
  if (value === null) {
    if (!s.nullable && s.type && !s['x-kubernetes-preserve-unknown-fields'])
      out.push(invalid(path, 'null', `${path} in body must be of type ${s.type}: "null"`));
    return;
  }
  if (s['x-kubernetes-int-or-string']) {
    if (typeof value !== 'string' && !(typeof value === 'number' && Number.isInteger(value))) {
      out.push(invalid(path, jsonType(value), `${path} in body must be of type integer,string: "${jsonType(value)}"`));
      return;
    }
  } else if (s.type && !typeMatches(s.type, value)) {
    out.push(invalid(path, jsonType(value), `${path} in body must be of type ${s.type}: "${jsonType(value)}"`));
    return;
  }
  validateScalar(value, s, path, out);
  if (Array.isArray(value)) validateArray(value, s, path, out);
  else if (isPlainObject(value)) validateObject(value, s, path, out);
  for (const sub of s.allOf ?? []) validateValue(value, sub, path, out);
  validateCombinators(value, s, path, out);
}

function passes(value: unknown, s: JSONSchemaProps, path: string): boolean {
  const errs: FieldCause[] = [];
  validateValue(value, s, path, errs);
  return errs.length === 0;
}

/** oneOf / anyOf / not: value validations only (they declare no fields in a structural schema). */
function validateCombinators(value: unknown, s: JSONSchemaProps, path: string, out: FieldCause[]): void {
  const name = path || '<root>';
  if (s.oneOf && s.oneOf.filter((x) => passes(value, x, path)).length !== 1)
    out.push(invalid(path, jsonType(value), `${name} in body must validate one and only one schema (oneOf)`));
  if (s.anyOf && !s.anyOf.some((x) => passes(value, x, path)))
    out.push(invalid(path, jsonType(value), `${name} in body must validate at least one schema (anyOf)`));
  if (s.not && passes(value, s.not, path))
    out.push(invalid(path, jsonType(value), `${name} in body must not validate the schema (not)`));
}

function validateScalar(value: unknown, s: JSONSchemaProps, path: string, out: FieldCause[]): void {
  if (s.enum && !s.enum.some((e) => JSON.stringify(e) === JSON.stringify(value))) {
    out.push(
      notSupported(
        path,
        value as string,
        s.enum.map((e) => (typeof e === 'string' ? e : JSON.stringify(e))),
      ),
    );
  }
  if (typeof value === 'string') {
    if (s.maxLength !== undefined && [...value].length > s.maxLength) out.push(tooLongString(path, s.maxLength));
    if (s.minLength !== undefined && [...value].length < s.minLength)
      out.push(invalid(path, value, `${path} in body should be at least ${s.minLength} chars long`));
    if (s.pattern !== undefined && !patternMatches(s.pattern, value))
      out.push(invalid(path, value, `${path} in body should match '${s.pattern}'`));
    if (s.format) {
      const bad = checkFormat(s.format, value);
      if (bad) out.push(invalid(path, value, `${path} in body must be of type ${bad}: ${JSON.stringify(value)}`));
    }
  }
  if (typeof value === 'number') {
    if (s.maximum !== undefined) {
      if (s.exclusiveMaximum ? value >= s.maximum : value > s.maximum)
        out.push(
          invalid(
            path,
            value,
            `${path} in body should be less than ${s.exclusiveMaximum ? '' : 'or equal to '}${s.maximum}`,
          ),
        );
    }
    if (s.minimum !== undefined) {
      if (s.exclusiveMinimum ? value <= s.minimum : value < s.minimum)
        out.push(
          invalid(
            path,
            value,
            `${path} in body should be greater than ${s.exclusiveMinimum ? '' : 'or equal to '}${s.minimum}`,
          ),
        );
    }
    if (s.multipleOf !== undefined && s.multipleOf > 0 && !Number.isInteger(value / s.multipleOf))
      out.push(invalid(path, value, `${path} in body should be a multiple of ${s.multipleOf}`));
  }
}

const patterns = new Map<string, RegExp | undefined>();
function patternMatches(pattern: string, value: string): boolean {
  let re = patterns.get(pattern);
  if (!patterns.has(pattern)) {
    try {
      re = new RegExp(pattern, 'u');
    } catch {
      re = undefined;
    }
    patterns.set(pattern, re);
  }
  return re ? re.test(value) : true;
}

function validateArray(value: unknown[], s: JSONSchemaProps, path: string, out: FieldCause[]): void {
  if (s.maxItems !== undefined && value.length > s.maxItems) out.push(tooMany(path, value.length, s.maxItems, 'items'));
  if (s.minItems !== undefined && value.length < s.minItems)
    out.push(invalid(path, value.length, `${path} in body should have at least ${s.minItems} items`));
  if (s.uniqueItems) {
    const seen = new Set<string>();
    if (value.some((v) => seen.size === seen.add(JSON.stringify(v)).size))
      out.push(invalid(path, '', `${path} in body shouldn't contain duplicates`));
  }
  const items = itemsOf(s);
  if (items) value.forEach((v, i) => validateValue(v, items, `${path}[${i}]`, out));
  validateListType(value, s, path, out);
}

/** `x-kubernetes-list-type`: set items are unique; map items are unique by their keys. */
function validateListType(value: unknown[], s: JSONSchemaProps, path: string, out: FieldCause[]): void {
  const lt = s['x-kubernetes-list-type'];
  if (lt === 'set') {
    const seen = new Set<string>();
    value.forEach((v, i) => {
      const k = JSON.stringify(v);
      if (seen.has(k)) out.push(duplicate(`${path}[${i}]`, v as string));
      seen.add(k);
    });
  } else if (lt === 'map') {
    const keys = s['x-kubernetes-list-map-keys'] ?? [];
    const seen = new Set<string>();
    value.forEach((v, i) => {
      if (!isPlainObject(v)) return;
      const kv: Record<string, unknown> = {};
      for (const k of keys) kv[k] = v[k] ?? defaultOf(itemsOf(s), k);
      const key = JSON.stringify(kv);
      if (seen.has(key)) out.push(duplicate(`${path}[${i}]`, { rendered: goMapLiteral(kv) }));
      seen.add(key);
    });
  }
}

function defaultOf(items: JSONSchemaProps | undefined, key: string): unknown {
  return items?.properties?.[key]?.default;
}

function validateObject(value: Record<string, unknown>, s: JSONSchemaProps, path: string, out: FieldCause[]): void {
  const n = Object.keys(value).length;
  if (s.maxProperties !== undefined && n > s.maxProperties) out.push(tooMany(path, n, s.maxProperties, 'items'));
  if (s.minProperties !== undefined && n < s.minProperties)
    out.push(invalid(path, n, `${path} in body should have at least ${s.minProperties} properties`));
  for (const r of s.required ?? []) if (value[r] === undefined) out.push(required(child(path, r)));
  const add = additionalOf(s);
  for (const [k, v] of Object.entries(value)) {
    const p = s.properties?.[k];
    if (p) validateValue(v, p, child(path, k), out);
    else if (add) validateValue(v, add, child(path, k), out);
  }
  if (s['x-kubernetes-embedded-resource']) validateEmbedded(value, path, out);
}

/** An embedded object (x-kubernetes-embedded-resource) must say what it is. */
function validateEmbedded(value: Record<string, unknown>, path: string, out: FieldCause[]): void {
  if (!value.kind) out.push(required(child(path, 'kind'), 'must not be empty'));
  if (!value.apiVersion) out.push(required(child(path, 'apiVersion'), 'must not be empty'));
}

/** Validates a whole custom resource's fields other than metadata (apiVersion, kind, spec, status...). */
export function validateCustomResource(obj: Record<string, unknown>, root: JSONSchemaProps): FieldCause[] {
  const out: FieldCause[] = [];
  for (const r of root.required ?? []) if (r !== 'metadata' && obj[r] === undefined) out.push(required(r));
  for (const [k, v] of Object.entries(obj)) {
    if (k === 'metadata' || k === 'apiVersion' || k === 'kind') continue;
    const p = root.properties?.[k] ?? additionalOf(root);
    if (p) validateValue(v, p, k, out);
  }
  return out;
}
