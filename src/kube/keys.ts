/** Object keys as client-go's cache builds them (MetaNamespaceKeyFunc, SplitMetaNamespaceKey). */

/** `namespace/name` for namespaced objects, `name` for cluster-scoped ones. */
export function metaNamespaceKey(obj: {
  readonly metadata?: { readonly namespace?: string | undefined; readonly name?: string | undefined } | undefined;
}): string {
  const ns = obj.metadata?.namespace;
  const name = obj.metadata?.name ?? '';
  return ns ? `${ns}/${name}` : name;
}

/** Splits a key made by `metaNamespaceKey`; a key without `/` is a cluster-scoped name. */
export function splitKey(key: string): { namespace?: string; name: string } {
  const i = key.indexOf('/');
  return i < 0 ? { name: key } : { namespace: key.slice(0, i), name: key.slice(i + 1) };
}

/** Splits a namespaced key into `[namespace, name]` ("" namespace for a cluster-scoped key). */
export function splitNamespacedKey(key: string): [namespace: string, name: string] {
  const { namespace = '', name } = splitKey(key);
  return [namespace, name];
}
