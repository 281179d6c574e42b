/**
 * Stowage's store keys are `/registry/<group|core>/<plural>/[<namespace>/]<name>`; kube-apiserver
 * keeps objects in etcd at `<prefix>/<plural>/[<namespace>/]<name>` (prefix `/registry` by default,
 * --etcd-prefix). These map one to the other. Keys outside `/registry/` are kept under the prefix
 * as they are.
 */
const REGISTRY = '/registry/';

/** The etcd key of a store key (or key prefix of at least `/registry/<group>/`). */
export function toEtcdKey(prefix: string, key: string): string {
  if (key.startsWith(REGISTRY)) {
    const groupEnd = key.indexOf('/', REGISTRY.length);
    if (groupEnd >= 0) return `${prefix}${key.slice(groupEnd)}`;
  }
  return `${prefix}${key}`;
}

/** Maps etcd keys read under `etcdPrefix` (the etcd form of `storePrefix`) back to store keys. */
export function fromEtcdKey(storePrefix: string, etcdPrefix: string, etcdKey: string): string {
  return `${storePrefix}${etcdKey.slice(etcdPrefix.length)}`;
}
