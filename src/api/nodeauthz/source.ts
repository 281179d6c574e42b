import type { PersistentVolume, Pod } from 'kubernetes-types/core/v1.js';
import type { VolumeAttachment } from 'kubernetes-types/storage/v1.js';
import type { ApiRegistry, ResourceStorage } from '../registry.js';
import type { GraphSource } from './graph.js';

const PODS_BY_NODE = 'spec.nodeName';
const PVS_BY_CLAIM = 'spec.claimRef';

/**
 * The node graph over the API server's watch caches (cached objects are never mutated, so
 * read-only views suffice), through indexes kept with each cache (pods by node, volumes by the
 * claim they are bound to), so a node's request costs its own pods, not every pod.
 */
export function registryGraphSource(registry: ApiRegistry): GraphSource {
  // A server serving fewer kinds (tests) relates nothing of the missing ones.
  const pods = registry.byGroupVersionPlural('', 'v1', 'pods');
  const pvs = registry.byGroupVersionPlural('', 'v1', 'persistentvolumes');
  const vas = registry.byGroupVersionPlural('storage.k8s.io', 'v1', 'volumeattachments');
  pods?.cache.addIndex(PODS_BY_NODE, (o) => {
    const node = (o as Pod).spec?.nodeName;
    return node ? [node] : [];
  });
  pvs?.cache.addIndex(PVS_BY_CLAIM, (o) => {
    const ref = (o as PersistentVolume).spec?.claimRef;
    return ref?.name ? [`${ref.namespace ?? ''}/${ref.name}`] : [];
  });
  const indexed = <T>(s: ResourceStorage | undefined, index: string, value: string): T[] =>
    s ? s.cache.byIndex(index, value).map((c) => c.obj as T) : [];
  return {
    podsOn: (node) => indexed<Pod>(pods, PODS_BY_NODE, node),
    pvsClaimedBy: (namespace, name) => indexed<PersistentVolume>(pvs, PVS_BY_CLAIM, `${namespace}/${name}`),
    pv: (name) => pvs?.get(undefined, name)?.obj as PersistentVolume | undefined,
    volumeAttachment: (name) => vas?.get(undefined, name)?.obj as VolumeAttachment | undefined,
  };
}
