/**
 * The shape structured-merge-diff sees in a kind's schema: scalars, maps (structs with named
 * fields, or string-keyed maps), and lists that are atomic, sets (`v:`) or maps keyed by some
 * fields (`k:`), from `x-kubernetes-list-type`/`x-kubernetes-list-map-keys`, falling back to
 * `x-kubernetes-patch-strategy: merge` with `x-kubernetes-patch-merge-key` as kube's schema
 * conversion does; maps and structs are atomic with `x-kubernetes-map-type: atomic`. Fields
 * without a schema are "deduced" from their value.
 */
import { resolveRef } from '../openapi/schemas.js';
import type { Schema } from '../resources/types.js';

export type TypeNode = ScalarType | MapType | ListType | DeducedType;

export interface ScalarType {
  readonly t: 'scalar';
}
export interface DeducedType {
  readonly t: 'deduced';
}
export interface MapType {
  readonly t: 'map';
  readonly atomic: boolean;
  /** Type of a named field; undefined for a string-keyed map (whose keys are then inserted as members). */
  field(name: string): TypeNode | undefined;
  /** Type of the values of a string-keyed map (or of unknown fields). */
  readonly elem: TypeNode;
  readonly struct: boolean;
  /** Fields Go serializes even when empty (no omitempty: the schema's `required`). */
  readonly required: ReadonlySet<string>;
}
export interface ListType {
  readonly t: 'list';
  readonly rel: 'atomic' | 'set' | 'map';
  readonly keys: readonly string[];
  readonly elem: TypeNode;
}

export const SCALAR: ScalarType = { t: 'scalar' };
export const DEDUCED: DeducedType = { t: 'deduced' };

const memo = new WeakMap<Schema, TypeNode>();

/** The type of a schema node (memoized per schema object; schemas are shared and frozen). */
export function typeOf(s: Schema | undefined): TypeNode {
  if (!s) return DEDUCED;
  const hit = memo.get(s);
  if (hit) return hit;
  const t = build(s);
  memo.set(s, t);
  return t;
}

function build(raw: Schema): TypeNode {
  const s = resolveRef(raw);
  if (s !== raw) return typeOf(s);
  if (s['x-kubernetes-int-or-string']) return SCALAR;
  if (s.type === 'array') {
    const elem = typeOf(s.items);
    const lt = s['x-kubernetes-list-type'];
    const keys = s['x-kubernetes-list-map-keys'];
    if (lt === 'map' && keys?.length) return { t: 'list', rel: 'map', keys, elem };
    if (lt === 'set') return { t: 'list', rel: 'set', keys: [], elem };
    if (lt === 'atomic') return { t: 'list', rel: 'atomic', keys: [], elem };
    const strategy = s['x-kubernetes-patch-strategy'] ?? '';
    if (strategy.split(',').includes('merge')) {
      const mk = s['x-kubernetes-patch-merge-key'];
      return mk ? { t: 'list', rel: 'map', keys: [mk], elem } : { t: 'list', rel: 'set', keys: [], elem };
    }
    return { t: 'list', rel: 'atomic', keys: [], elem };
  }
  if (s.type === 'object' || s.properties) {
    const props = s.properties;
    const ap = s.additionalProperties;
    if (!props && (ap === undefined || ap === true)) return DEDUCED;
    const atomic = s['x-kubernetes-map-type'] === 'atomic';
    const elem = typeof ap === 'object' ? typeOf(ap) : DEDUCED;
    return {
      t: 'map',
      atomic,
      struct: !!props,
      required: new Set(s.required ?? []),
      elem,
      field: (name) => (props && Object.prototype.hasOwnProperty.call(props, name) ? typeOf(props[name]) : undefined),
    };
  }
  if (s['x-kubernetes-preserve-unknown-fields']) return DEDUCED;
  return s.type ? SCALAR : DEDUCED;
}

/** What a deduced field is, from its value: maps are granular, lists atomic (structured-merge-diff's deduced type). */
const DEDUCED_MAP: MapType = {
  t: 'map',
  atomic: false,
  struct: false,
  required: new Set(),
  elem: DEDUCED,
  field: () => undefined,
};
const DEDUCED_LIST: ListType = { t: 'list', rel: 'atomic', keys: [], elem: DEDUCED };

export function concrete(t: TypeNode, v: unknown): ScalarType | MapType | ListType {
  if (t.t !== 'deduced') return t;
  if (Array.isArray(v)) return DEDUCED_LIST;
  if (v !== null && typeof v === 'object') return DEDUCED_MAP;
  return SCALAR;
}
