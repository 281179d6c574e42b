import { BadRequestError } from '../../util/errors.js';
import {
  cloneJson,
  hasOwn,
  isJsonObject,
  kindOf,
  MAX_JSON_DEPTH,
  setKey,
  type JsonObject,
  type JsonValue,
} from './json.js';
import { PatchNotApplicableError, type PatchMeta, type PatchMetaLookup } from './types.js';

const DIRECTIVE = '$patch';
const RETAIN_KEYS = '$retainKeys';
const DELETE_FROM_PRIMITIVE_LIST = '$deleteFromPrimitiveList';
const SET_ELEMENT_ORDER = '$setElementOrder';

/** kube's texts for the malformed-patch errors it answers with 400 (apimachinery mergepatch). */
export const SMP_MESSAGES = {
  badDocument: 'invalid JSON document',
  noListOfLists: 'lists of lists are not supported',
  primitiveList: 'invalid patch format of primitive list',
  retainKeys: 'invalid patch format of retainKeys',
  setElementOrder: 'invalid patch format of setElementOrder list',
} as const;

/**
 * Applies a Kubernetes strategic merge patch (`application/strategic-merge-patch+json`) the way
 * apimachinery's strategicpatch does on the server, and returns a new object; the inputs are not
 * modified and the result shares nothing with them.
 *
 * Maps merge and `null` deletes. Lists whose PatchMeta says 'merge' merge items by `mergeKey`
 * (or, for primitives, as a set); other lists replace. Map strategy 'replace' is not honoured:
 * our lookup answers 'replace' for every untagged field, and Kubernetes tags no map that way.
 * Directives: `$patch` (replace/delete/merge), `$retainKeys`, `$deleteFromPrimitiveList/<f>`,
 * `$setElementOrder/<f>`; any other `$` key is a BadRequestError.
 *
 * Values the object lacks are taken from the patch as upstream (1.32+) takes them: nulls dropped,
 * `$patch` maps dropped. We also drop the other directive keys, which kube's typed decoding would.
 * Errors: malformed patches → BadRequestError (400, kube's texts where kube has one);
 * lists of lists → PatchNotApplicableError (422), as kube answers.
 */
export function applyStrategicMergePatch(doc: unknown, patch: unknown, lookup: PatchMetaLookup): JsonObject {
  if (!isJsonObject(doc)) throw new BadRequestError(SMP_MESSAGES.badDocument);
  // Go decodes a JSON null into an empty patch map, so kube treats it as a no-op.
  if (patch === null) return cloneJson(doc, 'document') as JsonObject;
  if (!isJsonObject(patch)) throw new BadRequestError('a strategic merge patch must be a JSON object');
  return mergeMap(doc, patch, [], lookup);
}

function isMergeList(meta: PatchMeta): boolean {
  return meta.strategy === 'merge' || meta.strategy === 'merge,retainKeys';
}

function child(path: readonly string[], k: string): string[] {
  return [...path, k];
}

/** The field a `$prefix/<field>` directive names; kube answers 400 when the "/field" part is missing. */
function directiveField(key: string, prefix: string, message: string): string {
  const slash = key.indexOf('/');
  if (slash < 0 || key.slice(0, slash) !== prefix) throw new BadRequestError(message);
  return key.slice(slash + 1);
}

function mergeMap(
  orig: JsonObject | undefined,
  patch: JsonObject,
  path: readonly string[],
  lookup: PatchMetaLookup,
): JsonObject {
  if (path.length > MAX_JSON_DEPTH)
    throw new BadRequestError(`invalid JSON patch: nesting deeper than ${MAX_JSON_DEPTH} levels`);
  if (hasOwn(patch, DIRECTIVE)) {
    const d = patch[DIRECTIVE];
    if (d === 'replace') {
      const rest: JsonObject = {};
      for (const k of Object.keys(patch)) if (k !== DIRECTIVE) setKey(rest, k, patch[k] as JsonValue);
      return freshValue(rest, path.length) as JsonObject;
    }
    // Upstream empties the map rather than removing its key.
    if (d === 'delete') return {};
    // Upstream rejects an explicit 'merge' on a map; it is the default, so we accept it.
    if (d !== 'merge') throw new BadRequestError(`unknown patch type ${JSON.stringify(d)} in map at ${showPath(path)}`);
  }

  let retain: Set<string> | undefined;
  const orders = new Map<string, JsonValue[]>();
  const deletions: Array<[string, JsonValue[]]> = [];
  const fields: string[] = [];
  for (const k of Object.keys(patch)) {
    const v = patch[k];
    if (k === DIRECTIVE) continue;
    if (k === RETAIN_KEYS) {
      if (!Array.isArray(v)) throw new BadRequestError(SMP_MESSAGES.retainKeys);
      retain = new Set(v.filter((x): x is string => typeof x === 'string'));
    } else if (k.startsWith(SET_ELEMENT_ORDER)) {
      const f = directiveField(k, SET_ELEMENT_ORDER, SMP_MESSAGES.setElementOrder);
      if (!Array.isArray(v)) throw new BadRequestError(SMP_MESSAGES.setElementOrder);
      orders.set(f, v);
    } else if (k.startsWith(DELETE_FROM_PRIMITIVE_LIST)) {
      const f = directiveField(k, DELETE_FROM_PRIMITIVE_LIST, SMP_MESSAGES.primitiveList);
      if (!Array.isArray(v)) throw new BadRequestError(SMP_MESSAGES.primitiveList);
      deletions.push([f, v]);
    } else if (k.startsWith('$')) {
      throw new BadRequestError(`unknown strategic merge patch directive "${k}" at ${showPath(path)}`);
    } else {
      fields.push(k);
    }
  }
  // Every field the patch sets must be one of the keys it says to retain.
  if (retain)
    for (const k of fields) if (patch[k] !== null && !retain.has(k)) throw new BadRequestError(SMP_MESSAGES.retainKeys);

  const out: JsonObject = {};
  const inOrig = (k: string): boolean => orig !== undefined && hasOwn(orig, k) && (!retain || retain.has(k));
  if (orig) {
    for (const k of Object.keys(orig)) {
      if (!inOrig(k)) continue;
      const order = orders.get(k);
      let v: JsonValue | undefined;
      if (order) v = orderedList(orig[k] ?? undefined, patch, k, order, path, lookup);
      else if (!hasOwn(patch, k)) v = cloneJson(orig[k], 'document');
      else if (patch[k] !== null) v = mergeValue(orig[k] as JsonValue, patch[k] as JsonValue, child(path, k), lookup);
      if (v !== undefined) setKey(out, k, v);
    }
  }
  for (const k of fields) {
    if (inOrig(k) || orders.has(k) || patch[k] === null) continue;
    const v = freshValue(patch[k], path.length + 1);
    if (v !== undefined) setKey(out, k, v);
  }
  for (const [k, order] of orders) {
    if (inOrig(k)) continue;
    const list = orderedList(undefined, patch, k, order, path, lookup);
    if (list !== undefined) setKey(out, k, list);
  }
  // After merging, so that a field's additions and its deletion list both apply (as kubectl expects).
  for (const [k, values] of deletions) {
    const cur = hasOwn(out, k) ? out[k] : undefined;
    if (!Array.isArray(cur)) continue; // nothing to delete from
    const drop = new Set<JsonValue>();
    for (const v of values) {
      const kind = kindOf(v, 'patch');
      if (kind === 'object' || kind === 'array') throw new BadRequestError(SMP_MESSAGES.primitiveList);
      drop.add(v);
    }
    if (cur.some((v) => typeof v === 'object' && v !== null)) throw new BadRequestError(SMP_MESSAGES.primitiveList);
    setKey(
      out,
      k,
      cur.filter((v) => !drop.has(v)),
    );
  }
  return out;
}

/** Merges a patch value into an existing one of the field at `path`; undefined means drop the field. */
function mergeValue(
  orig: JsonValue,
  pv: JsonValue,
  path: readonly string[],
  lookup: PatchMetaLookup,
): JsonValue | undefined {
  const ok = kindOf(orig, 'document');
  const pk = kindOf(pv, 'patch');
  if (ok === 'object' && pk === 'object') return mergeMap(orig as JsonObject, pv as JsonObject, path, lookup);
  if (ok === 'array' && pk === 'array') {
    const meta = lookup(path);
    if (isMergeList(meta)) return mergeList(orig as JsonValue[], pv as JsonValue[], meta, path, lookup);
  }
  return freshValue(pv, path.length);
}

/**
 * A value taken from the patch as it stands (a field the object lacks, a changed type, a list
 * that replaces, an appended item): as upstream, nulls inside it are dropped and so is any map
 * carrying `$patch`; other directive keys, which kube's typed decoding would drop, are dropped
 * too. Undefined means the value itself was a `$patch` map and the field goes.
 */
function freshValue(v: unknown, depth: number): JsonValue | undefined {
  if (depth > MAX_JSON_DEPTH)
    throw new BadRequestError(`invalid JSON patch: nesting deeper than ${MAX_JSON_DEPTH} levels`);
  if (Array.isArray(v)) {
    const out: JsonValue[] = [];
    for (const item of v) {
      const f = item === null ? null : freshValue(item, depth + 1);
      if (f !== undefined) out.push(f);
    }
    return out;
  }
  if (!isJsonObject(v)) return cloneJson(v, 'patch');
  if (hasOwn(v, DIRECTIVE)) return undefined;
  const out: JsonObject = {};
  for (const k of Object.keys(v)) {
    const item = v[k];
    if (item === null) continue;
    if (k.startsWith('$')) {
      if (k === RETAIN_KEYS || k.startsWith(SET_ELEMENT_ORDER) || k.startsWith(DELETE_FROM_PRIMITIVE_LIST)) continue;
      throw new BadRequestError(`unknown strategic merge patch directive "${k}"`);
    }
    const f = freshValue(item, depth + 1);
    if (f !== undefined) setKey(out, k, f);
  }
  return out;
}

type ItemKind = 'object' | 'primitive';

/** All items of the lists must be of one JSON type, and not lists. */
function elementKind(orig: readonly JsonValue[], patch: readonly JsonValue[]): ItemKind {
  let first: string | undefined;
  const check = (v: JsonValue, role: 'document' | 'patch'): void => {
    const k = kindOf(v, role);
    if (k === 'array') throw new PatchNotApplicableError(SMP_MESSAGES.noListOfLists);
    if (first === undefined) first = k;
    else if (first !== k) throw new BadRequestError('list element types are not identical');
  };
  for (const v of orig) check(v, 'document');
  for (const v of patch) check(v, 'patch');
  return first === 'object' ? 'object' : 'primitive';
}

function mergeList(
  orig: readonly JsonValue[],
  patch: readonly JsonValue[],
  meta: PatchMeta,
  path: readonly string[],
  lookup: PatchMetaLookup,
): JsonValue[] {
  if (orig.length === 0 && patch.length === 0) return [];
  if (elementKind(orig, patch) === 'primitive') {
    // A set union; primitives need no copying.
    const merged = [...new Set([...orig, ...patch])];
    return enforceOrder(merged, patch, orig, (v) => v);
  }
  const mergeKey = meta.mergeKey;
  if (!mergeKey) throw new BadRequestError(`cannot merge lists of objects without a merge key at ${showPath(path)}`);
  const keyOf = (v: JsonValue): JsonValue | undefined => (v as JsonObject)[mergeKey];

  const deleteKeys = new Set<JsonValue>();
  const regular: JsonObject[] = [];
  let replace = false;
  for (const item of patch as readonly JsonObject[]) {
    if (!hasOwn(item, DIRECTIVE)) {
      regular.push(item);
      continue;
    }
    const d = item[DIRECTIVE];
    if (d === 'delete') {
      deleteKeys.add(requireMergeKey(item, mergeKey));
    } else if (d === 'replace') {
      replace = true; // keep going: other directive items are dropped too
    } else if (d === 'merge') {
      throw new BadRequestError('merging lists cannot yet be specified in the patch');
    } else {
      throw new BadRequestError(`unknown patch type ${JSON.stringify(d)} in list at ${showPath(path)}`);
    }
  }
  if (replace) {
    const items = regular.map((it) => freshValue(it, path.length) as JsonObject);
    for (const it of items) requireMergeKey(it, mergeKey);
    return items;
  }

  // Deletions remove every item with the key, wherever the directive sits in the patch list.
  const base = (orig as readonly JsonObject[]).filter(
    (o) => !(hasOwn(o, mergeKey) && deleteKeys.has(o[mergeKey] as JsonValue)),
  );
  const out: JsonValue[] = base.slice();
  const position = new Map<JsonValue, number>(); // merge key value → first item with it
  out.forEach((o, i) => {
    if (hasOwn(o as JsonObject, mergeKey) && !position.has(keyOf(o) as JsonValue))
      position.set(keyOf(o) as JsonValue, i);
  });
  const fresh = new Set<JsonValue>();
  for (const item of regular) {
    const kv = requireMergeKey(item, mergeKey);
    const i = position.get(kv);
    const merged =
      i === undefined
        ? (freshValue(item, path.length) as JsonObject)
        : mergeMap(out[i] as JsonObject, item, path, lookup);
    if (i !== undefined) out[i] = merged;
    else position.set(kv, out.push(merged) - 1);
    fresh.add(merged);
  }
  for (let i = 0; i < out.length; i++) {
    const v = out[i] as JsonValue;
    if (!fresh.has(v)) out[i] = cloneJson(v, 'document');
    requireMergeKey(out[i] as JsonObject, mergeKey);
  }
  return enforceOrder(out, regular, base, keyOf);
}

function requireMergeKey(item: JsonValue, mergeKey: string): JsonValue {
  if (!isJsonObject(item) || !hasOwn(item, mergeKey)) {
    throw new BadRequestError(`map: ${JSON.stringify(item)} does not contain declared merge key: ${mergeKey}`);
  }
  return item[mergeKey] as JsonValue;
}

/**
 * `$setElementOrder/<field>`: merge the field as usual, then order it — items the order list
 * names come in its order, the rest keep their place relative to the live list.
 */
function orderedList(
  origVal: JsonValue | undefined,
  patch: JsonObject,
  field: string,
  order: readonly JsonValue[],
  path: readonly string[],
  lookup: PatchMetaLookup,
): JsonValue[] | undefined {
  const fieldPath = child(path, field);
  const meta = lookup(fieldPath);
  const mergeKey = meta.mergeKey ?? '';
  const patchVal = hasOwn(patch, field) ? patch[field] : undefined;
  if (origVal !== undefined && !Array.isArray(origVal)) {
    throw new BadRequestError(`${SET_ELEMENT_ORDER}/${field}: ${showPath(fieldPath)} is not a list`);
  }
  if (patchVal !== undefined && !Array.isArray(patchVal)) throw new BadRequestError(SMP_MESSAGES.setElementOrder);
  if (patchVal) validateOrder(patchVal, order, mergeKey, field);

  let merged: JsonValue[];
  if (origVal && patchVal) {
    merged = isMergeList(meta)
      ? mergeList(origVal, patchVal, meta, fieldPath, lookup)
      : (freshValue(patchVal, fieldPath.length) as JsonValue[]);
  } else if (origVal) {
    merged = cloneJson(origVal, 'document') as JsonValue[];
  } else if (patchVal) {
    merged = freshValue(patchVal, fieldPath.length) as JsonValue[];
  } else {
    return undefined;
  }
  if (!mergeKey) return enforceOrder(merged, order, origVal ?? [], (v) => v);
  for (const v of merged) requireMergeKey(v, mergeKey);
  for (const v of order) requireMergeKey(v, mergeKey);
  return enforceOrder(merged, order, origVal ?? [], (v) => (v as JsonObject)[mergeKey]);
}

/** The patch list's items (deletions and directives aside) must appear in the order list, in its order. */
function validateOrder(
  patchList: readonly JsonValue[],
  order: readonly JsonValue[],
  mergeKey: string,
  field: string,
): void {
  if (order.length === 0 || patchList.length === 0) return;
  const items = mergeKey
    ? patchList.filter((it) => {
        if (!isJsonObject(it)) throw new BadRequestError(SMP_MESSAGES.setElementOrder);
        return it[DIRECTIVE] !== 'delete';
      })
    : patchList;
  let p = 0;
  for (let s = 0; p < items.length && s < order.length; s++) {
    while (p < items.length && isJsonObject(items[p]) && hasOwn(items[p] as JsonObject, DIRECTIVE)) p++;
    if (p >= items.length) break;
    const it = items[p] as JsonValue;
    const o = order[s] as JsonValue;
    const same = mergeKey ? requireMergeKey(it, mergeKey) === requireMergeKey(o, mergeKey) : it === o;
    if (same) p++;
  }
  if (p < items.length) {
    throw new BadRequestError(`the order of the patch list "${field}" does not match its ${SET_ELEMENT_ORDER} list`);
  }
}

/**
 * upstream's normalizeElementOrder: split `merged` into items the patch (or order list) names and
 * server-only items; sort the first by `patchOrder` and the second by `serverOrder`; then interleave
 * them, taking a server-only item first only when the live list had it before the next patch item.
 */
function enforceOrder(
  merged: JsonValue[],
  patchOrder: readonly JsonValue[],
  serverOrder: readonly JsonValue[],
  keyOf: (v: JsonValue) => JsonValue | undefined,
): JsonValue[] {
  const patchIdx = firstIndexes(patchOrder, keyOf);
  const serverIdx = firstIndexes(serverOrder, keyOf);
  const patchItems: JsonValue[] = [];
  const serverOnly: JsonValue[] = [];
  for (const v of merged) (patchIdx.has(keyOf(v)) ? patchItems : serverOnly).push(v);
  sortBy(patchItems, patchIdx, keyOf);
  sortBy(serverOnly, serverIdx, keyOf);

  const out: JsonValue[] = [];
  let i = 0;
  let j = 0;
  while (i < serverOnly.length && j < patchItems.length) {
    const li = serverIdx.get(keyOf(serverOnly[i] as JsonValue));
    const ri = serverIdx.get(keyOf(patchItems[j] as JsonValue));
    if (li !== undefined && ri !== undefined && li < ri) out.push(serverOnly[i++] as JsonValue);
    else out.push(patchItems[j++] as JsonValue);
  }
  while (i < serverOnly.length) out.push(serverOnly[i++] as JsonValue);
  while (j < patchItems.length) out.push(patchItems[j++] as JsonValue);
  return out;
}

function firstIndexes(
  list: readonly JsonValue[],
  keyOf: (v: JsonValue) => JsonValue | undefined,
): Map<JsonValue | undefined, number> {
  const m = new Map<JsonValue | undefined, number>();
  list.forEach((v, i) => {
    const k = keyOf(v);
    if (!m.has(k)) m.set(k, i);
  });
  return m;
}

/** Stable sort by position in `idx`; items it lacks go last, in their current order. */
function sortBy(
  list: JsonValue[],
  idx: Map<JsonValue | undefined, number>,
  keyOf: (v: JsonValue) => JsonValue | undefined,
): void {
  list.sort((a, b) => (idx.get(keyOf(a)) ?? Infinity) - (idx.get(keyOf(b)) ?? Infinity) || 0);
}

function showPath(path: readonly string[]): string {
  return path.length === 0 ? 'the object root' : path.join('.');
}
