import { InvalidError } from '../../util/errors.js';

/**
 * What strategic merge patch needs to know about one field: Kubernetes reads this from Go struct
 * tags (`patchStrategy`, `patchMergeKey`); we read it from the resource's schema.
 */
export interface PatchMeta {
  /** 'merge' for lists merged by key (or primitive sets), 'replace' otherwise. 'retainKeys' for maps. */
  readonly strategy: 'merge' | 'replace' | 'retainKeys' | 'merge,retainKeys';
  /** The merge key of a list of objects merged by key (e.g. `name` for containers). */
  readonly mergeKey?: string;
}

/** Looks up the patch metadata of the field at `path` (field names from the object root; list items have no segment). */
export type PatchMetaLookup = (path: readonly string[]) => PatchMeta;

/**
 * kube-apiserver's message for a patch it could parse but not apply: a failed json-patch `test`,
 * a missing path, lists of lists in a strategic merge. The server sends exactly this text
 * (NewGenericServerResponse with 422 drops the underlying reason), so we do too.
 */
export const PATCH_NOT_APPLICABLE_MESSAGE = 'the server rejected our request due to an error in our request';

/**
 * A well-formed patch that does not apply to this object: HTTP 422, reason Invalid. The message
 * is kube's fixed text; `detail` says what went wrong, for logs and tests.
 */
export class PatchNotApplicableError extends InvalidError {
  constructor(readonly detail: string) {
    super(PATCH_NOT_APPLICABLE_MESSAGE);
  }
}
