import type { Schema } from '../resources/types.js';
import { resolveRef, schemaFor } from './schemas.js';

/**
 * Fields of `obj` that the kind's schema does not declare, for `fieldValidation=Strict`, as
 * Kubernetes names them: `spec.foo`, `spec.containers[0].bogus`, `metadata.labelz`. Maps and
 * preserve-unknown-fields (RawExtension, FieldsV1) accept any key. Values of the wrong JSON type
 * are not reported here (that is a decode error, not an unknown field).
 */
export function findUnknownFields(obj: unknown, group: string, version: string, kind: string): string[] {
  return findUnknownFieldsIn(obj, schemaFor(group, version, kind));
}

/** The same against a given root schema (a custom resource's). */
export function findUnknownFieldsIn(obj: unknown, schema: Schema): string[] {
  const out: string[] = [];
  walk(obj, schema, '', out);
  return out;
}

function walk(value: unknown, schema: Schema, path: string, out: string[]): void {
  if (value === null || value === undefined) return;
  const s = resolveRef(schema);
  if (s['x-kubernetes-preserve-unknown-fields']) return;
  if (Array.isArray(value)) {
    if (s.type === 'array' && s.items) value.forEach((v, i) => walk(v, s.items as Schema, `${path}[${i}]`, out));
    return;
  }
  if (typeof value !== 'object' || s.type !== 'object') return;
  for (const [key, v] of Object.entries(value)) {
    const field = s.properties?.[key];
    const child = path ? `${path}.${key}` : key;
    if (field) walk(v, field, child, out);
    else if (typeof s.additionalProperties === 'object') walk(v, s.additionalProperties, child, out);
    else if (s.additionalProperties !== true) out.push(child);
  }
}

/** kube-apiserver's wording of a strict decoding failure (the base error of the 400). */
export function strictDecodingMessage(unknownFields: readonly string[]): string {
  return `strict decoding error: ${unknownFields.map((f) => `unknown field "${f}"`).join(', ')}`;
}

/**
 * The whole 400 BadRequest message of a create/update body with unknown fields, as
 * kube-apiserver's decoder wraps it: `Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field "spec.foo"`.
 */
export function strictDecodingBadRequestMessage(
  kind: string,
  version: string,
  unknownFields: readonly string[],
): string {
  return `${kind} in version "${version}" cannot be handled as a ${kind}: ${strictDecodingMessage(unknownFields)}`;
}
