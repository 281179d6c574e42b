/**
 * What a node may reach (kube's node authorizer graph): node ← pod ← {secret, configmap, pvc ← pv
 * ← secret}, and node ← volumeattachment. Answered from the API server's own watch caches at the
 * moment of the request, so it is always in step with pods, claims and volumes (no second copy).
 */
import type { PersistentVolume, Pod } from 'kubernetes-types/core/v1.js';
import type { VolumeAttachment } from 'kubernetes-types/storage/v1.js';
import { podReferences, pvSecretKeys } from '../../kube/podrefs.js';

/** The cached objects the graph reads (the watch caches' indexes in the server; plain arrays in tests). */
export interface GraphSource {
  /** The pods bound to `node`. */
  podsOn(node: string): readonly Pod[];
  /** The volumes whose claimRef names the claim `namespace/name`. */
  pvsClaimedBy(namespace: string, name: string): readonly PersistentVolume[];
  pv(name: string): PersistentVolume | undefined;
  volumeAttachment(name: string): VolumeAttachment | undefined;
}

export type VertexKind = 'pod' | 'secret' | 'configmap' | 'pvc' | 'pv' | 'volumeattachment';

/** True when the object is related to node `node` by a path of the graph. */
export function hasPathToNode(
  src: GraphSource,
  node: string,
  kind: VertexKind,
  namespace: string,
  name: string,
): boolean {
  switch (kind) {
    case 'volumeattachment':
      return src.volumeAttachment(name)?.spec?.nodeName === node;
    case 'pod':
      return src.podsOn(node).some((p) => p.metadata?.namespace === namespace && p.metadata?.name === name);
    case 'pv': {
      const ref = src.pv(name)?.spec?.claimRef;
      return !!ref?.name && claimsOf(src.podsOn(node)).has(`${ref.namespace ?? ''}/${ref.name}`);
    }
    case 'pvc':
      return claimsOf(src.podsOn(node)).has(`${namespace}/${name}`);
    case 'configmap':
      return src.podsOn(node).some((p) => p.metadata?.namespace === namespace && podReferences(p).configMaps.has(name));
    case 'secret': {
      const pods = src.podsOn(node);
      if (pods.some((p) => p.metadata?.namespace === namespace && podReferences(p).secrets.has(name))) return true;
      const key = `${namespace}/${name}`;
      for (const claim of claimsOf(pods)) {
        const slash = claim.indexOf('/');
        if (
          src.pvsClaimedBy(claim.slice(0, slash), claim.slice(slash + 1)).some((pv) => pvSecretKeys(pv).includes(key))
        )
          return true;
      }
      return false;
    }
  }
}

/** `namespace/name` of every claim the pods use. */
function claimsOf(pods: readonly Pod[]): Set<string> {
  const out = new Set<string>();
  for (const p of pods) for (const c of podReferences(p).claims) out.add(`${p.metadata?.namespace ?? ''}/${c}`);
  return out;
}
