import { BadRequestError } from '../../util/errors.js';

import { ApiRequestEntityTooLargeError } from '../status.js';

import { cloneJson, hasOwn, isJsonObject, setKey, type JsonObject, type JsonValue } from './json.js';
import { PatchNotApplicableError } from './types.js';
import { jsonEqual } from '../../util/jsonequal.js';

/** kube-apiserver's cap on operations in one JSON patch (answered 413 RequestEntityTooLarge). */
export const MAX_JSON_PATCH_OPERATIONS = 10_000;

export const JSON_PATCH_OPS = ['add', 'remove', 'replace', 'move', 'copy', 'test'] as const;
export type JsonPatchOp = (typeof JSON_PATCH_OPS)[number];

/**
 * Applies an RFC 6902 JSON patch (`application/json-patch+json`) and returns a new document; the
 * inputs are not modified and the result shares nothing with them.
 *
 * As kube-apiserver does: a body that is not an array of objects is a BadRequestError (400); an
 * operation that cannot be applied (unknown op, missing field or path, index out of range, failed
 * `test`) is a PatchNotApplicableError (422 Invalid). Operations apply in order, all or nothing.
 *
 * Where kube's library (evanphx/json-patch v4) accepts more than RFC 6902, so do we, so that what
 * kube accepts works here: negative array indexes count from the end (-1 is the last item; for
 * `add`, -1 is the end), indexes may have leading zeros, a `~` not followed by 0 or 1 is literal,
 * a missing `value` is null, and `test` of an absent path against null passes.
 */
export function applyJsonPatch(doc: unknown, patch: unknown): JsonValue {
  // Go decodes a JSON null into an empty list of operations, so kube treats it as a no-op.
  if (patch === null) return cloneJson(doc, 'document');
  if (!Array.isArray(patch)) throw new BadRequestError('json patch must be a JSON array of operations');
  if (patch.length > MAX_JSON_PATCH_OPERATIONS) {
    throw new ApiRequestEntityTooLargeError(
      `Request entity too large: The allowed maximum operations in a JSON patch is ${MAX_JSON_PATCH_OPERATIONS}, got ${patch.length}`,
    );
  }
  patch.forEach((op, i) => {
    if (!isJsonObject(op)) throw new BadRequestError(`json patch operation ${i} is not a JSON object`);
  });
  const box: Box = { root: cloneJson(doc, 'document') };
  (patch as JsonObject[]).forEach((op, i) => applyOperation(box, op, i));
  return box.root;
}

/** Holds the document so that operations on the root ("" pointer) can replace it. */
interface Box {
  root: JsonValue;
}

function applyOperation(box: Box, raw: JsonObject, i: number): void {
  const fail = (why: string): PatchNotApplicableError =>
    new PatchNotApplicableError(`json patch operation ${i}: ${why}`);
  const op = raw.op;
  if (typeof op !== 'string') throw fail('"op" must be a string');
  if (!(JSON_PATCH_OPS as readonly string[]).includes(op)) throw fail(`unknown op "${op}"`);
  const path = pointerField(raw, 'path', fail);
  const kind = op as JsonPatchOp;
  switch (kind) {
    case 'add':
      add(box, path, valueField(raw), fail);
      return;
    case 'remove':
      remove(box, path, fail);
      return;
    case 'replace':
      replace(box, path, valueField(raw), fail);
      return;
    case 'move': {
      const from = pointerField(raw, 'from', fail);
      const value = get(box.root, from.tokens);
      if (value === undefined) throw fail(`move: the document has no value at "from" ${from.text}`);
      if (from.text === path.text) return;
      if (path.text.startsWith(`${from.text}/`))
        throw fail(`move: cannot move ${from.text} into its own child ${path.text}`);
      remove(box, from, fail);
      add(box, path, value, fail);
      return;
    }
    case 'copy': {
      const from = pointerField(raw, 'from', fail);
      const value = get(box.root, from.tokens);
      if (value === undefined) throw fail(`copy: the document has no value at "from" ${from.text}`);
      add(box, path, cloneJson(value, 'document'), fail);
      return;
    }
    case 'test': {
      const expected = valueField(raw);
      const actual = get(box.root, path.tokens);
      if (actual === undefined && expected === null) return;
      if (actual === undefined) throw fail(`test: the document has no value at ${path.text}`);
      if (!jsonEqual(actual, expected)) throw fail(`test: the value at ${path.text} is not the expected value`);
      return;
    }
  }
}

type Fail = (why: string) => PatchNotApplicableError;

interface Pointer {
  readonly text: string;
  readonly tokens: readonly string[];
}

function pointerField(raw: JsonObject, field: 'path' | 'from', fail: Fail): Pointer {
  const text = raw[field];
  if (typeof text !== 'string') throw fail(`"${field}" must be a string`);
  return { text, tokens: parsePointer(text, fail) };
}

/** The operation's value (null when absent, as kube), copied so that the result shares nothing with the patch. */
function valueField(raw: JsonObject): JsonValue {
  return hasOwn(raw, 'value') ? cloneJson(raw.value, 'patch') : null;
}

/** RFC 6901: "" is the whole document; otherwise "/"-separated tokens with ~1 → "/" and ~0 → "~". */
function parsePointer(text: string, fail: Fail): string[] {
  if (text === '') return [];
  if (!text.startsWith('/')) throw fail(`invalid JSON pointer "${text}": it must be empty or start with "/"`);
  return text
    .slice(1)
    .split('/')
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** The value at `tokens`, or undefined when there is none. */
function get(root: JsonValue, tokens: readonly string[]): JsonValue | undefined {
  let cur: JsonValue = root;
  for (const t of tokens) {
    if (Array.isArray(cur)) {
      const i = resolveIndex(parseIndex(t), cur.length, false);
      if (i === undefined) return undefined;
      cur = cur[i] as JsonValue;
    } else if (isJsonObject(cur)) {
      if (!hasOwn(cur, t)) return undefined;
      cur = cur[t] as JsonValue;
    } else {
      return undefined;
    }
  }
  return cur;
}

/** A decimal array index, signed as Go's strconv.Atoi reads it; anything else is no index. */
function parseIndex(token: string): number | undefined {
  return /^[+-]?[0-9]{1,15}$/.test(token) ? Number(token) : undefined;
}

/** The position `i` names in an array of `len` items (counting from the end when negative), if any. */
function resolveIndex(i: number | undefined, len: number, forInsert: boolean): number | undefined {
  if (i === undefined) return undefined;
  const size = forInsert ? len + 1 : len;
  const at = i < 0 ? i + size : i;
  return at >= 0 && at < size ? at : undefined;
}

function parentOf(box: Box, p: Pointer, opName: string, fail: Fail): { parent: JsonValue[] | JsonObject; key: string } {
  const parent = get(box.root, p.tokens.slice(0, -1));
  if (parent === undefined) throw fail(`${opName}: the document is missing the parent of ${p.text}`);
  if (!Array.isArray(parent) && !isJsonObject(parent)) {
    throw fail(`${opName}: the parent of ${p.text} is neither an object nor an array`);
  }
  return { parent, key: p.tokens[p.tokens.length - 1] as string };
}

function arrayIndex(arr: JsonValue[], key: string, p: Pointer, opName: string, forInsert: boolean, fail: Fail): number {
  if (key === '-' && forInsert) return arr.length;
  const i = parseIndex(key);
  if (i === undefined) throw fail(`${opName}: "${key}" in ${p.text} is not an array index`);
  const at = resolveIndex(i, arr.length, forInsert);
  if (at === undefined) throw fail(`${opName}: index ${i} in ${p.text} is out of range (array length ${arr.length})`);
  return at;
}

function add(box: Box, p: Pointer, value: JsonValue, fail: Fail): void {
  if (p.tokens.length === 0) {
    box.root = value;
    return;
  }
  const { parent, key } = parentOf(box, p, 'add', fail);
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, key, p, 'add', true, fail), 0, value);
  else setKey(parent, key, value);
}

function remove(box: Box, p: Pointer, fail: Fail): void {
  if (p.tokens.length === 0) throw fail('remove: cannot remove the whole document');
  const { parent, key } = parentOf(box, p, 'remove', fail);
  if (Array.isArray(parent)) {
    parent.splice(arrayIndex(parent, key, p, 'remove', false, fail), 1);
    return;
  }
  if (!hasOwn(parent, key)) throw fail(`remove: the document has no value at ${p.text}`);
  delete parent[key];
}

function replace(box: Box, p: Pointer, value: JsonValue, fail: Fail): void {
  if (p.tokens.length === 0) {
    box.root = value;
    return;
  }
  const { parent, key } = parentOf(box, p, 'replace', fail);
  if (Array.isArray(parent)) {
    parent[arrayIndex(parent, key, p, 'replace', false, fail)] = value;
    return;
  }
  if (!hasOwn(parent, key)) throw fail(`replace: the document has no value at ${p.text}`);
  setKey(parent, key, value);
}
