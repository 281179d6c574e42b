/**
 * What a node may reach (kube's node authorizer graph): node ← pod ← {secret, configmap, pvc ← pv
 * ← secret}, and node ← volumeattachment. Answered from the API server's own watch caches at the
 * moment of the request, so it is always in step with pods, claims and volumes (no second copy).
 */
import type { PersistentVolume, PersistentVolumeClaim, Pod } from 'kubernetes-types/core/v1.js';
import type { VolumeAttachment } from 'kubernetes-types/storage/v1.js';
import { podReferences, pvSecretKeys } from '../../kube/podrefs.js';

/** The cached objects the graph reads (the watch caches in the server; plain arrays in tests). */
export interface GraphSource {
  /** Every pod (the graph keeps those bound to the asking node). */
  pods(): Iterable<Pod>;
  pvs(): Iterable<PersistentVolume>;
  pvc(namespace: string, name: string): PersistentVolumeClaim | undefined;
  pv(name: string): PersistentVolume | undefined;
  volumeAttachment(name: string): VolumeAttachment | undefined;
}

export type VertexKind = 'pod' | 'secret' | 'configmap' | 'pvc' | 'pv' | 'volumeattachment';

/** True when the object is related to node `node` by a path of the graph. */
export function hasPathToNode(src: GraphSource, node: string, kind: VertexKind, namespace: string, name: string): boolean {
  switch (kind) {
    case 'volumeattachment':
      return src.volumeAttachment(name)?.spec?.nodeName === node;
    case 'pod':
      return podsOn(src, node).some((p) => p.metadata?.namespace === namespace && p.metadata?.name === name);
    case 'pv': {
      const ref = src.pv(name)?.spec?.claimRef;
      return !!ref?.name && claimsOf(src, node).has(`${ref.namespace ?? ''}/${ref.name}`);
    }
    case 'pvc':
      return claimsOf(src, node).has(`${namespace}/${name}`);
    case 'configmap':
      return podsOn(src, node).some((p) => p.metadata?.namespace === namespace && podReferences(p).configMaps.has(name));
    case 'secret': {
      if (podsOn(src, node).some((p) => p.metadata?.namespace === namespace && podReferences(p).secrets.has(name))) return true;
      const claims = claimsOf(src, node);
      const key = `${namespace}/${name}`;
      for (const pv of src.pvs()) {
        const ref = pv.spec?.claimRef;
        if (ref?.name && claims.has(`${ref.namespace ?? ''}/${ref.name}`) && pvSecretKeys(pv).includes(key)) return true;
      }
      return false;
    }
  }
}

function podsOn(src: GraphSource, node: string): Pod[] {
  const out: Pod[] = [];
  for (const p of src.pods()) if (p.spec?.nodeName === node) out.push(p);
  return out;
}

/** `namespace/name` of every claim a pod bound to `node` uses. */
function claimsOf(src: GraphSource, node: string): Set<string> {
  const out = new Set<string>();
  for (const p of podsOn(src, node)) for (const c of podReferences(p).claims) out.add(`${p.metadata?.namespace ?? ''}/${c}`);
  return out;
}
