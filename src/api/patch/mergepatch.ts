import { cloneJson, hasOwn, isJsonObject, MAX_JSON_DEPTH, setKey, type JsonObject, type JsonValue } from './json.js';
import { BadRequestError } from '../../util/errors.js';

/**
 * Applies an RFC 7386 JSON merge patch (`application/merge-patch+json`) and returns a new
 * document; the inputs are not modified and the result shares nothing with them.
 *
 * An object patch merges key by key: `null` deletes the key, an object merges recursively,
 * anything else (arrays included) replaces. A patch that is not an object replaces the whole
 * document. Keys keep the document's order; new keys follow in the patch's order.
 */
export function applyMergePatch(doc: unknown, patch: unknown): JsonValue {
  return merge(doc, patch, 0);
}

function merge(target: unknown, patch: unknown, depth: number): JsonValue {
  if (!isJsonObject(patch)) return cloneJson(patch, 'patch', depth);
  if (depth >= MAX_JSON_DEPTH)
    throw new BadRequestError(`invalid JSON patch: nesting deeper than ${MAX_JSON_DEPTH} levels`);
  const out: JsonObject = {};
  const base = isJsonObject(target) ? target : undefined;
  if (base) {
    for (const k of Object.keys(base)) {
      if (!hasOwn(patch, k)) setKey(out, k, cloneJson(base[k], 'document', depth + 1));
      else if (patch[k] !== null) setKey(out, k, merge(base[k], patch[k], depth + 1));
    }
  }
  for (const k of Object.keys(patch)) {
    if (patch[k] === null || (base && hasOwn(base, k))) continue;
    setKey(out, k, merge(undefined, patch[k], depth + 1));
  }
  return out;
}
