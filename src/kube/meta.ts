/**
 * ObjectMeta accessors for objects that may lack metadata (apimachinery's meta.Accessor): each
 * returns "" where the field is unset, as Go's zero value does.
 */
import { metaNamespaceKey } from './keys.js';

interface WithMeta {
  readonly metadata?:
    | { readonly name?: string | undefined; readonly namespace?: string | undefined; readonly uid?: string | undefined }
    | undefined;
}

export function nameOf(o: WithMeta): string {
  return o.metadata?.name ?? '';
}

export function namespaceOf(o: WithMeta): string {
  return o.metadata?.namespace ?? '';
}

export function uidOf(o: WithMeta): string {
  return o.metadata?.uid ?? '';
}

/** The cache key: `namespace/name`, or `name` for a cluster-scoped object (MetaNamespaceKeyFunc). */
export const keyOf: (o: WithMeta) => string = metaNamespaceKey;
