import type { Schema } from '../resources/types.js';
import { canonicalQuantity, parseQuantity } from '../../kube/quantity.js';
import { definitions, refName, resolveRef } from '../openapi/schemas.js';
import { GO_FIELD_TYPES } from './gotypes.js';
import { goTimeParseError } from './gotime.js';
import { base64ErrorAt } from './base64.js';

/**
 * Go `encoding/json` semantics (as kube-apiserver's decoder, sigs.k8s.io/json, applies them) over
 * an already parsed JSON value, driven by the kinds' OpenAPI schemas:
 * - a value of the wrong JSON type is an `UnmarshalTypeError`, named by the innermost Go struct
 *   and the JSON path of struct fields (`ObjectMeta.metadata.labels`; list indices and map keys are
 *   not part of it) and the Go type (`map[string]string`, `[]v1.PersistentVolumeAccessMode`);
 * - decoding goes on after such an error and the first one is reported, but an error from a type's
 *   own UnmarshalJSON (Quantity, IntOrString, Time) stops decoding and wins;
 * - `null` leaves the zero value; unknown fields are skipped (strict checks are elsewhere).
 * The value is normalised in place the way a Go round trip would: null struct fields dropped, null
 * list items and map values zeroed, JSON-number quantities rewritten as canonical strings.
 */

/** A decode failure; `message` is Go's error text. */
export class GoDecodeError extends Error {}

/** Where the decoder is, as Go's `errorContext`: the innermost struct and the struct-field path. */
class Cursor {
  struct = '';
  readonly fields: string[] = [];
  saved: string | undefined;

  typeError(value: string, goType: string): string {
    if (!this.struct && !this.fields.length) return `json: cannot unmarshal ${value} into Go value of type ${goType}`;
    return `json: cannot unmarshal ${value} into Go struct field ${this.struct}.${this.fields.join('.')} of type ${goType}`;
  }
  /** A saved error: decoding continues, the first one is reported. */
  save(message: string): void {
    this.saved ??= message;
  }
  /** An error from a type's own UnmarshalJSON: decoding stops. */
  fatal(message: string): never {
    throw new GoDecodeError(message);
  }
}

/** Checks (and normalises) one value; returns the value to keep in its place. */
type Check = (v: unknown, c: Cursor) => unknown;

interface Node {
  /** Go's `reflect.Type.String()` of the type. */
  readonly goType: string;
  check: Check;
  /** What a JSON null becomes inside a list or map (Go's zero value, re-encoded). */
  readonly zero: unknown;
}

const MIN_INT64 = -9223372036854775808;
const MAX_INT64_EXCL = 9223372036854775808;

function jsonKind(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  switch (typeof v) {
    case 'string':
      return 'string';
    case 'number':
      return 'number';
    case 'boolean':
      return 'bool';
    default:
      return 'object';
  }
}

/** Go's ParseInt + OverflowInt on a JSON number; the error names the number as written. */
function intFits(n: number, bits: 32 | 64): boolean {
  if (!Number.isInteger(n)) return false;
  return bits === 32 ? n >= -2147483648 && n <= 2147483647 : n >= MIN_INT64 && n < MAX_INT64_EXCL;
}

function scalar(goType: string, ok: (v: unknown) => boolean, zero: unknown): Node {
  return {
    goType,
    zero,
    check: (v, c) => {
      if (v !== null && !ok(v)) c.save(c.typeError(jsonKind(v), goType));
      return v;
    },
  };
}

function integer(goType: string, bits: 32 | 64): Node {
  return {
    goType,
    zero: 0,
    check: (v, c) => {
      if (v === null) return v;
      if (typeof v !== 'number') c.save(c.typeError(jsonKind(v), goType));
      else if (!intFits(v, bits)) c.save(c.typeError(`number ${String(v)}`, goType));
      return v;
    },
  };
}

/** A fresh copy of a zero value (a zero struct is a new `{}` each time). */
function freshZero(z: unknown): unknown {
  return z !== null && typeof z === 'object' ? {} : z;
}

const ANY: Node = { goType: 'interface {}', zero: null, check: (v) => v };

const BYTES: Node = {
  goType: '[]uint8',
  zero: null,
  check: (v, c) => {
    if (v === null) return v;
    if (typeof v === 'string') {
      const at = base64ErrorAt(v);
      if (at >= 0) c.save(`illegal base64 data at input byte ${at}`);
    } else if (Array.isArray(v)) {
      const u8 = integer('uint8', 64);
      for (const x of v) {
        if (typeof x === 'number' && (x < 0 || x > 255)) c.save(c.typeError(`number ${String(x)}`, 'uint8'));
        else u8.check(x, c);
      }
    } else c.save(c.typeError(jsonKind(v), '[]uint8'));
    return v;
  },
};

const QUANTITY: Node = {
  goType: 'resource.Quantity',
  zero: '0',
  check: (v, c) => {
    if (v === null) return v;
    // Quantity's UnmarshalJSON parses whatever JSON text it is given (a bool, list or object fails).
    if (typeof v !== 'string' && typeof v !== 'number')
      return c.fatal(quantityError(JSON.stringify(v)) ?? 'invalid quantity');
    const text = typeof v === 'string' ? v.trim() : v;
    const err = quantityError(text);
    if (err) c.fatal(err);
    // Go re-encodes a parsed quantity as a string; a JSON number must not reach storage as one.
    return typeof v === 'number' ? canonicalQuantity(v) : text;
  },
};

function quantityError(v: string | number): string | undefined {
  try {
    parseQuantity(v);
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

const INT_OR_STRING: Node = {
  goType: 'intstr.IntOrString',
  zero: 0,
  check: (v, c) => {
    if (v === null || typeof v === 'string') return v;
    // IntOrString's UnmarshalJSON decodes anything but a string into its int32.
    if (typeof v !== 'number') return c.fatal(c.typeError(jsonKind(v), 'int32'));
    if (!intFits(v, 32)) c.fatal(c.typeError(`number ${String(v)}`, 'int32'));
    return v;
  },
};

function timeNode(micro: boolean): Node {
  return {
    goType: micro ? 'v1.MicroTime' : 'v1.Time',
    zero: null,
    check: (v, c) => {
      if (v === null) return v;
      if (typeof v !== 'string') return c.fatal(c.typeError(jsonKind(v), 'string'));
      const err = goTimeParseError(v, micro);
      if (err) c.fatal(err);
      return v;
    },
  };
}

/** Definitions whose Go type decodes itself (UnmarshalJSON) or takes any JSON. */
const SPECIAL: Readonly<Record<string, Node>> = {
  'io.k8s.apimachinery.pkg.api.resource.Quantity': QUANTITY,
  'io.k8s.apimachinery.pkg.util.intstr.IntOrString': INT_OR_STRING,
  'io.k8s.apimachinery.pkg.apis.meta.v1.Time': timeNode(false),
  'io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime': timeNode(true),
  'io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1': ANY,
  'io.k8s.apimachinery.pkg.runtime.RawExtension': ANY,
};

/** `io.k8s.api.core.v1.ObjectReference` → `v1.ObjectReference` (Go prints package name + type). */
function goTypeOfDefinition(name: string): string {
  const parts = name.split('.');
  return `${parts[parts.length - 2]}.${parts[parts.length - 1]}`;
}

const compiled = new Map<string, Node>();

/** The checker of a definition, compiled once (recursive definitions resolve lazily). */
export function definitionNode(name: string): Node {
  const hit = compiled.get(name);
  if (hit) return hit;
  const special = SPECIAL[name];
  if (special) return special;
  const def = definitions()[name];
  if (!def) throw new Error(`unknown schema definition ${name}`);
  const goType = goTypeOfDefinition(name);
  // Registered before its fields compile, so a field referring back to it finds it.
  const node: { goType: string; zero: unknown; check: Check } = { goType, zero: {}, check: () => undefined };
  compiled.set(name, node);
  if (def['x-kubernetes-preserve-unknown-fields'] || def.type !== 'object' || !def.properties) {
    const inner = compileSchema(def, goType);
    node.check = inner.check;
    node.zero = inner.zero;
    return node;
  }
  node.check = structCheck(name.slice(name.lastIndexOf('.') + 1), goType, def.properties);
  return node;
}

/** A struct: known fields are checked with the field pushed on the path; others are skipped. */
export function structCheck(structName: string, goType: string, properties: Readonly<Record<string, Schema>>): Check {
  const fields = new Map<string, Node>();
  const fieldNode = (key: string): Node | undefined => {
    let n = fields.get(key);
    if (!n) {
      const s = properties[key];
      if (!s) return undefined;
      n = compileSchema(s, GO_FIELD_TYPES[`${structName}.${key}`]);
      fields.set(key, n);
    }
    return n;
  };
  return (v, c) => {
    if (v === null) return v;
    if (typeof v !== 'object' || Array.isArray(v)) {
      c.save(c.typeError(jsonKind(v), goType));
      return v;
    }
    const o = v as Record<string, unknown>;
    const outerStruct = c.struct;
    const depth = c.fields.length;
    for (const key of Object.keys(o)) {
      const n = fieldNode(key);
      if (!n) continue;
      const x = o[key];
      if (x === null) {
        delete o[key];
        continue;
      }
      c.struct = structName;
      c.fields.push(key);
      const y = n.check(x, c);
      if (y !== x) o[key] = y;
      c.fields.length = depth;
      c.struct = outerStruct;
    }
    return v;
  };
}

/** Element type of a Go slice or map type name, for named types given by GO_FIELD_TYPES. */
function elementGoType(goType: string | undefined): string | undefined {
  if (!goType) return undefined;
  if (goType.startsWith('[]')) return goType.slice(2);
  const m = /^map\[[^\]]+\](.+)$/.exec(goType);
  return m ? m[1] : undefined;
}

/** Compiles a schema node; `named` is the Go type name when the field's type is a named one. */
function compileSchema(schema: Schema, named?: string): Node {
  const ref = refName(schema);
  if (ref !== undefined) return lazy(ref);
  const s = resolveRef(schema);
  if (s['x-kubernetes-preserve-unknown-fields']) return ANY;
  switch (s.type) {
    case 'string':
      if (s.format === 'byte') return BYTES;
      return scalar(named ?? 'string', (v) => typeof v === 'string', '');
    case 'boolean':
      return scalar(named ?? 'bool', (v) => typeof v === 'boolean', false);
    case 'integer':
      return s.format === 'int32' ? integer(named ?? 'int32', 32) : integer(named ?? 'int64', 64);
    case 'number':
      return scalar(named ?? 'float64', (v) => typeof v === 'number', 0);
    case 'array': {
      if (!s.items) return ANY;
      const elem = compileSchema(s.items, elementGoType(named));
      const goType = named ?? `[]${elem.goType}`;
      return {
        goType,
        zero: null,
        check: (v, c) => {
          if (v === null) return v;
          if (!Array.isArray(v)) {
            c.save(c.typeError(jsonKind(v), goType));
            return v;
          }
          for (let i = 0; i < v.length; i++) {
            const x: unknown = v[i];
            const y = x === null ? freshZero(elem.zero) : elem.check(x, c);
            if (y !== x) v[i] = y;
          }
          return v;
        },
      };
    }
    case 'object': {
      const ap = s.additionalProperties;
      if (typeof ap !== 'object') return ANY;
      const elem = compileSchema(ap, elementGoType(named));
      const goType = named ?? `map[string]${elem.goType}`;
      return {
        goType,
        zero: null,
        check: (v, c) => {
          if (v === null) return v;
          if (typeof v !== 'object' || Array.isArray(v)) {
            c.save(c.typeError(jsonKind(v), goType));
            return v;
          }
          const o = v as Record<string, unknown>;
          for (const key of Object.keys(o)) {
            const x = o[key];
            const y = x === null ? freshZero(elem.zero) : elem.check(x, c);
            if (y !== x) o[key] = y;
          }
          return v;
        },
      };
    }
    default:
      return ANY;
  }
}

/** A reference compiled on first use (definitions refer to each other, some recursively). */
function lazy(name: string): Node {
  const special = SPECIAL[name];
  if (special) return special;
  let target: Node | undefined;
  const get = (): Node => (target ??= definitionNode(name));
  return {
    goType: goTypeOfDefinition(name),
    zero: {},
    check: (v, c) => get().check(v, c),
  };
}

/**
 * Runs a compiled checker over a value (normalising it in place). Throws GoDecodeError with Go's
 * message for the error Go's decoder would return.
 */
export function runCheck(check: Check, value: unknown): void {
  const c = new Cursor();
  check(value, c);
  if (c.saved !== undefined) throw new GoDecodeError(c.saved);
}

export type { Check };
