import type { PersistentVolume, PersistentVolumeClaim, Pod } from 'kubernetes-types/core/v1.js';
import type { VolumeAttachment } from 'kubernetes-types/storage/v1.js';
import type { ApiRegistry } from '../registry.js';
import type { GraphSource } from './graph.js';

/** The node graph over the API server's watch caches (cached objects are never mutated, so read-only views suffice). */
export function registryGraphSource(registry: ApiRegistry): GraphSource {
  const objects = function* <T>(kind: string): Iterable<T> {
    for (const c of registry.kind(kind).cache.values()) yield c.obj as T;
  };
  return {
    pods: () => objects<Pod>('Pod'),
    pvs: () => objects<PersistentVolume>('PersistentVolume'),
    pvc: (ns, name) => registry.kind('PersistentVolumeClaim').get(ns, name)?.obj as PersistentVolumeClaim | undefined,
    pv: (name) => registry.kind('PersistentVolume').get(undefined, name)?.obj as PersistentVolume | undefined,
    volumeAttachment: (name) => registry.kind('VolumeAttachment').get(undefined, name)?.obj as VolumeAttachment | undefined,
  };
}
