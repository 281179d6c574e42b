import type { KubeObject, ResourceDef } from './resources/types.js';

export type IncludeObject = 'None' | 'Metadata' | 'Object';

/** The row's `object`: PartialObjectMetadata by default, as kube-apiserver sends it (rows carry no managedFields). */
function rowObject(obj: KubeObject, include: IncludeObject): unknown {
  if (include === 'None') return undefined;
  if (include === 'Object') return obj;
  const { managedFields: _m, ...metadata } = obj.metadata;
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata };
}

/** A meta.k8s.io/v1 Table of `objs` with the kind's columns. */
export function toTable(
  def: ResourceDef,
  objs: readonly KubeObject[],
  o: {
    resourceVersion?: string;
    continue?: string;
    remainingItemCount?: number;
    include?: IncludeObject;
    noHeaders?: boolean;
  },
): object {
  const now = Date.now();
  const include = o.include ?? 'Metadata';
  const metadata: Record<string, unknown> = {};
  if (o.resourceVersion !== undefined) metadata.resourceVersion = o.resourceVersion;
  if (o.continue) metadata.continue = o.continue;
  if (o.remainingItemCount !== undefined) metadata.remainingItemCount = o.remainingItemCount;
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata,
    columnDefinitions: o.noHeaders ? [] : def.columns,
    rows: objs.map((obj) => {
      const row: Record<string, unknown> = { cells: def.row(obj, now) };
      const ro = rowObject(obj, include);
      if (ro !== undefined) row.object = ro;
      return row;
    }),
  };
}
