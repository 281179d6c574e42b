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
