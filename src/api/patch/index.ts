import { BadRequestError, UnsupportedMediaTypeError, assertNever } from '../../util/errors.js';
import { isJsonObject, type JsonObject } from './json.js';
import { applyJsonPatch } from './jsonpatch.js';
import { applyMergePatch } from './mergepatch.js';
import { applyStrategicMergePatch } from './strategic.js';
import { PatchNotApplicableError, type PatchMetaLookup } from './types.js';

export { applyJsonPatch, MAX_JSON_PATCH_OPERATIONS } from './jsonpatch.js';
export { applyMergePatch } from './mergepatch.js';
export { applyStrategicMergePatch, SMP_MESSAGES } from './strategic.js';
export { isJsonObject, type JsonObject, type JsonValue } from './json.js';
export {
  PatchNotApplicableError,
  PATCH_NOT_APPLICABLE_MESSAGE,
  type PatchMeta,
  type PatchMetaLookup,
} from './types.js';

/** The PATCH content types we accept, in the order kube-apiserver lists them, and the patch kind each means. */
export const PATCH_CONTENT_TYPES = {
  'application/json-patch+json': 'json',
  'application/merge-patch+json': 'merge',
  'application/strategic-merge-patch+json': 'strategic',
  'application/apply-patch+yaml': 'apply',
} as const;
export type PatchContentType = keyof typeof PATCH_CONTENT_TYPES;
export type PatchKind = (typeof PATCH_CONTENT_TYPES)[PatchContentType];

/**
 * The patch kind a Content-Type header names; parameters (`; charset=utf-8`) and case are ignored.
 * Anything else is an UnsupportedMediaTypeError (415) with kube-apiserver's message.
 */
export function patchKindOf(contentType: string): PatchKind {
  const bare = (contentType.split(';', 1)[0] ?? '').trim().toLowerCase();
  if (Object.prototype.hasOwnProperty.call(PATCH_CONTENT_TYPES, bare))
    return PATCH_CONTENT_TYPES[bare as PatchContentType];
  throw new UnsupportedMediaTypeError(
    `the body of the request was in an unknown format - accepted media types include: ${Object.keys(PATCH_CONTENT_TYPES).join(', ')}`,
  );
}

/**
 * Applies a PATCH body (already parsed from JSON) to an object, as its Content-Type says, and
 * returns the new object. The inputs are not modified and the result shares nothing with them.
 * Errors: UnsupportedMediaTypeError (415), BadRequestError (400, malformed patch),
 * PatchNotApplicableError (422 Invalid, a patch that does not apply — also when the result of a
 * json or merge patch is not an object, which kube reports while decoding it).
 */
export function applyPatch(contentType: string, doc: unknown, patchBody: unknown, lookup: PatchMetaLookup): JsonObject {
  const kind = patchKindOf(contentType);
  switch (kind) {
    case 'json':
      return requireObject(applyJsonPatch(doc, patchBody));
    case 'merge':
      // kube's merge-patch library refuses a scalar or null body outright; an array body replaces
      // the object and then fails to decode (422), which requireObject reproduces.
      if (patchBody === null || typeof patchBody !== 'object') {
        throw new BadRequestError('Invalid JSON Patch');
      }
      return requireObject(applyMergePatch(doc, patchBody));
    case 'strategic':
      return applyStrategicMergePatch(doc, patchBody, lookup);
    case 'apply':
      // Server-side apply merges through the field manager (src/api/fieldmanager), not here.
      throw new BadRequestError('an apply patch is not applied as a plain patch');
    default:
      return assertNever(kind);
  }
}

function requireObject(v: unknown): JsonObject {
  if (!isJsonObject(v)) throw new PatchNotApplicableError('the patched document is not a JSON object');
  return v;
}
