import { BadRequestError } from '../../util/errors.js';

/** A JSON value as `JSON.parse` produces it. */
export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;
export interface JsonObject {
  [key: string]: JsonValue;
}

/**
 * Nesting deeper than this is refused rather than risking a stack overflow (a 500). Kubernetes
 * objects nest a few dozen levels at most; kube's own JSON decoder stops at 10000.
 */
export const MAX_JSON_DEPTH = 1000;

/** Which input a validation error is about, for the message. */
export type JsonRole = 'document' | 'patch';

/** True for a plain JSON object (not an array, not null, not a class instance). */
export function isJsonObject(v: unknown): v is JsonObject {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto: unknown = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

export function hasOwn(o: object, k: string): boolean {
  return Object.prototype.hasOwnProperty.call(o, k);
}

/** Sets `o[k]`, defining an own property even for `__proto__` (which plain assignment would not). */
export function setKey(o: JsonObject, k: string, v: JsonValue): void {
  if (k === '__proto__')
    Object.defineProperty(o, k, { value: v, writable: true, enumerable: true, configurable: true });
  else o[k] = v;
}

/**
 * Deep-copies `v`, checking on the way that it is JSON (finite numbers, plain objects, no
 * `undefined`). This is the one copy a patch makes of the parts it does not touch.
 */
export function cloneJson(v: unknown, role: JsonRole, depth = 0): JsonValue {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return v;
  if (typeof v === 'number') {
    if (Number.isFinite(v)) return v;
    throw invalidJson(role, `non-finite number ${String(v)}`);
  }
  if (depth >= MAX_JSON_DEPTH) throw invalidJson(role, `nesting deeper than ${MAX_JSON_DEPTH} levels`);
  if (Array.isArray(v)) {
    const out: JsonValue[] = new Array<JsonValue>(v.length);
    for (let i = 0; i < v.length; i++) out[i] = cloneJson(v[i], role, depth + 1);
    return out;
  }
  if (isJsonObject(v)) {
    const out: JsonObject = {};
    for (const k of Object.keys(v)) setKey(out, k, cloneJson(v[k], role, depth + 1));
    return out;
  }
  throw invalidJson(role, `a value of type ${v === undefined ? 'undefined' : typeof v} is not JSON`);
}

/** Checks that `v` is a primitive JSON value or a container, without copying. */
export function kindOf(v: unknown, role: JsonRole): 'null' | 'boolean' | 'number' | 'string' | 'array' | 'object' {
  if (v === null) return 'null';
  switch (typeof v) {
    case 'boolean':
      return 'boolean';
    case 'string':
      return 'string';
    case 'number':
      if (Number.isFinite(v)) return 'number';
      throw invalidJson(role, `non-finite number ${String(v)}`);
    default:
      if (Array.isArray(v)) return 'array';
      if (isJsonObject(v)) return 'object';
      throw invalidJson(role, `a value of type ${v === undefined ? 'undefined' : typeof v} is not JSON`);
  }
}

function invalidJson(role: JsonRole, why: string): BadRequestError {
  return new BadRequestError(`invalid JSON ${role}: ${why}`);
}
