/**
 * Defaulting of a custom resource from its schema's `default`s (apiextensions-apiserver's
 * structural defaulting): a missing field with a default gets a copy of it, a `null` in a field
 * that is not nullable is replaced by its default, and defaults apply inside what was defaulted.
 */
import { additionalOf, isPlainObject, itemsOf, type JSONSchemaProps } from './types.js';

/** Applies defaults to `value` in place. */
export function applyDefaults(value: unknown, s: JSONSchemaProps): void {
  if (Array.isArray(value)) {
    const items = itemsOf(s);
    if (items) for (const v of value) applyDefaults(v, items);
    return;
  }
  if (!isPlainObject(value)) return;
  for (const [k, p] of Object.entries(s.properties ?? {})) {
    const cur = value[k];
    if (p.default !== undefined && (cur === undefined || (cur === null && !p.nullable))) {
      value[k] = structuredClone(p.default);
    }
    if (value[k] !== undefined) applyDefaults(value[k], p);
  }
  const add = additionalOf(s);
  if (add) for (const [k, v] of Object.entries(value)) if (!s.properties?.[k]) applyDefaults(v, add);
}
