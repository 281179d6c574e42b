import type { PersistentVolume, PersistentVolumeClaim, Pod } from 'kubernetes-types/core/v1.js';
import type { VolumeAttachment } from 'kubernetes-types/storage/v1.js';
import type { ApiRegistry, ResourceStorage } from '../registry.js';
import type { GraphSource } from './graph.js';

/** The node graph over the API server's watch caches (cached objects are never mutated, so read-only views suffice). */
export function registryGraphSource(registry: ApiRegistry): GraphSource {
  // A server serving fewer kinds (tests) relates nothing of the missing ones.
  const pods = registry.byGroupVersionPlural('', 'v1', 'pods');
  const pvs = registry.byGroupVersionPlural('', 'v1', 'persistentvolumes');
  const pvcs = registry.byGroupVersionPlural('', 'v1', 'persistentvolumeclaims');
  const vas = registry.byGroupVersionPlural('storage.k8s.io', 'v1', 'volumeattachments');
  const objects = function* <T>(s: ResourceStorage | undefined): Iterable<T> {
    if (s) for (const c of s.cache.values()) yield c.obj as T;
  };
  return {
    pods: () => objects<Pod>(pods),
    pvs: () => objects<PersistentVolume>(pvs),
    pvc: (ns, name) => pvcs?.get(ns, name)?.obj as PersistentVolumeClaim | undefined,
    pv: (name) => pvs?.get(undefined, name)?.obj as PersistentVolume | undefined,
    volumeAttachment: (name) => vas?.get(undefined, name)?.obj as VolumeAttachment | undefined,
  };
}
