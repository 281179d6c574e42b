/**
 * Which attach/detach keys an informer event may affect (the pairs of a pod, a node, a volume,
 * or all of them for a resync), read from the shared informers' indexes.
 */
import type { Enqueuer } from '../../client/index.js';
import { nodeReadyStatus } from '../../kube/node.js';
import {
  POD_CLAIM_INDEX,
  POD_NODE_INDEX,
  VA_NODE_INDEX,
  VA_VOLUME_INDEX,
  podClaimKeys,
  type ControllerInformers,
} from '../informers.js';
import { isControllerManaged, podTerminated } from './desired.js';
import { nodeKey, pairKey } from './keys.js';
import type { Node, Pod } from './types.js';
import { jsonEqual } from '../../util/jsonequal.js';

/** A node change that can alter what is attached there: management, readiness, out-of-service taints, volumes in use. */
export function attachFieldsChanged(a: Node, b: Node): boolean {
  return (
    isControllerManaged(a) !== isControllerManaged(b) ||
    nodeReadyStatus(a) !== nodeReadyStatus(b) ||
    a.metadata?.deletionTimestamp !== b.metadata?.deletionTimestamp ||
    !jsonEqual(a.spec?.taints, b.spec?.taints) ||
    !jsonEqual(a.status?.volumesInUse, b.status?.volumesInUse)
  );
}

export interface KeyFanout {
  /** Pods using the volume through its bound claim. */
  podsOfVolume(pvName: string): Pod[];
  podsOnNode(nodeName: string): Pod[];
  pod(q: Enqueuer<string>, p: Pod): void;
  node(q: Enqueuer<string>, nodeName: string): void;
  volume(q: Enqueuer<string>, pvName: string): void;
  /** Every pair of the volumes attached to the node, on any node (a pod elsewhere may wait for them). */
  volumesOf(q: Enqueuer<string>, nodeName: string): void;
  all(q: Enqueuer<string>): void;
}

export function newKeyFanout(
  inf: Pick<ControllerInformers, 'pods' | 'pvs' | 'pvcs' | 'attachments' | 'nodes'>,
): KeyFanout {
  const { pods, pvs: volumes, pvcs: claims, attachments, nodes } = inf;
  // Pods whose attachments a key touches: those using the volume (for Multi-Attach) and those on the node (for volumesAttached).
  const podsOfVolume = (pvName: string): Pod[] => {
    const ref = volumes.lister.get(pvName)?.spec?.claimRef;
    return ref?.name ? pods.byIndex(POD_CLAIM_INDEX, `${ref.namespace ?? ''}/${ref.name}`) : [];
  };
  const podsOnNode = (nodeName: string): Pod[] => pods.byIndex(POD_NODE_INDEX, nodeName);

  const volumesOfPod = (p: Pod): string[] =>
    podClaimKeys(p).flatMap((k) => claims.lister.getByKey(k)?.spec?.volumeName ?? []);
  // A pod whose claim is already gone cannot name its volume: the node's attachments are reconciled then.
  const enqueuePod = (q: Enqueuer<string>, p: Pod): void => {
    const node = p.spec?.nodeName;
    if (!node) return;
    const pvs = volumesOfPod(p);
    if (pvs.length < podClaimKeys(p).length) return enqueueNode(q, node);
    for (const pv of pvs) q.add(pairKey(pv, node));
  };
  const enqueueNode = (q: Enqueuer<string>, node: string): void => {
    q.add(nodeKey(node));
    for (const va of attachments.byIndex(VA_NODE_INDEX, node)) {
      const pv = va.spec?.source?.persistentVolumeName;
      if (pv) q.add(pairKey(pv, node));
    }
    for (const p of podsOnNode(node)) if (!podTerminated(p)) for (const pv of volumesOfPod(p)) q.add(pairKey(pv, node));
  };
  const enqueueVolume = (q: Enqueuer<string>, pvName: string): void => {
    for (const va of attachments.byIndex(VA_VOLUME_INDEX, pvName)) q.add(pairKey(pvName, va.spec.nodeName));
    for (const p of podsOfVolume(pvName)) if (p.spec?.nodeName) q.add(pairKey(pvName, p.spec.nodeName));
  };
  const enqueueAll = (q: Enqueuer<string>): void => {
    for (const n of nodes.lister.list()) q.add(nodeKey(n.metadata?.name ?? ''));
    for (const va of attachments.lister.list()) {
      const pv = va.spec?.source?.persistentVolumeName;
      if (pv) q.add(pairKey(pv, va.spec.nodeName));
    }
    for (const p of pods.lister.list()) enqueuePod(q, p);
  };
  const enqueueVolumesOf = (q: Enqueuer<string>, node: string): void => {
    for (const va of attachments.byIndex(VA_NODE_INDEX, node)) {
      const pv = va.spec?.source?.persistentVolumeName;
      if (pv) enqueueVolume(q, pv);
    }
  };
  return {
    podsOfVolume,
    podsOnNode,
    pod: enqueuePod,
    node: enqueueNode,
    volume: enqueueVolume,
    volumesOf: enqueueVolumesOf,
    all: enqueueAll,
  };
}
