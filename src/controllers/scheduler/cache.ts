/**
 * The scheduler's own knowledge layered over informers (kube's scheduler cache + assume caches):
 * pods it placed that the informer does not show assigned yet, and volumes it pre-bound that the
 * informer does not show pre-bound yet. Without these, two pods scheduled back to back could both
 * take the last volume slot of a node or the same static PV.
 */
import { POD_CLAIM_INDEX, POD_NODE_INDEX, podClaimKeys } from '../informers.js';
import type { Lister } from '../../client/index.js';
import {
  isTerminal,
  podKey,
  type ClusterView,
  type CSIDriver,
  type CSINode,
  type CSIStorageCapacity,
  type Node,
  type PersistentVolume,
  type PersistentVolumeClaim,
  type Pod,
  type StorageClass,
} from './types.js';
import { nameOf } from '../../kube/meta.js';

/**
 * A pod this scheduler placed. `binding`: API writes in flight (volumes or the pod binding);
 * `waitingVolumes`: waiting for the PV controller / provisioner (PreBind); `bound`: binding POSTed,
 * waiting for the informer to show it.
 */
export interface AssumedPod {
  readonly pod: Pod; // a copy with spec.nodeName set
  readonly node: string;
  readonly phase: 'binding' | 'waitingVolumes' | 'bound';
  /** Clock ms after which waiting for volumes gives up (PreBind's bind timeout). */
  readonly deadline: number;
  /** Claims whose selected-node this scheduler wrote → the resourceVersion it got back (older informer copies are stale). */
  readonly claimVersions: Readonly<Record<string, number>>;
}

export interface SchedulerSources {
  readonly pods: Lister<Pod>;
  readonly nodes: Lister<Node>;
  readonly volumes: Lister<PersistentVolume>;
  readonly claims: Lister<PersistentVolumeClaim>;
  readonly classes: Lister<StorageClass>;
  readonly csiNodes: Lister<CSINode>;
  readonly csiDrivers: Lister<CSIDriver>;
  readonly capacities: Lister<CSIStorageCapacity>;
}

export class SchedulerCache {
  private readonly assumed = new Map<string, AssumedPod>();
  private readonly assumedVolumes = new Map<string, PersistentVolume>();

  constructor(private readonly src: SchedulerSources) {}

  assume(
    pod: Pod,
    node: string,
    phase: AssumedPod['phase'],
    deadline: number,
    claimVersions: Readonly<Record<string, number>> = {},
  ): void {
    const copy = structuredClone(pod);
    copy.spec = { ...(copy.spec ?? { containers: [] }), nodeName: node };
    this.assumed.set(podKey(pod), { pod: copy, node, phase, deadline, claimVersions });
  }

  assumedPod(key: string): AssumedPod | undefined {
    return this.assumed.get(key);
  }

  forget(key: string): void {
    this.assumed.delete(key);
  }

  /** Records a PV this scheduler pre-bound (the object as the API server stored it). */
  assumeVolume(pv: PersistentVolume): void {
    this.assumedVolumes.set(nameOf(pv), pv);
  }

  /** Drops an assumed volume whose pre-binding write failed. */
  forgetVolume(name: string): void {
    this.assumedVolumes.delete(name);
  }

  /** Drops an assumed volume once the informer has caught up (its copy carries a claimRef) or it is gone. */
  observeVolume(pv: PersistentVolume | undefined, name: string): void {
    if (!pv || pv.spec?.claimRef) this.assumedVolumes.delete(name);
  }

  view(): ClusterView {
    const src = this.src;
    const assumed = [...this.assumed.values()];
    const volumeOf = (name: string): PersistentVolume | undefined => {
      const a = this.assumedVolumes.get(name);
      const l = src.volumes.get(name);
      return a && l && !l.spec?.claimRef ? a : l;
    };
    const merge = (informer: readonly Pod[], extra: readonly Pod[]): Pod[] => {
      const seen = new Set(informer.map(podKey));
      return [...informer, ...extra.filter((p) => !seen.has(podKey(p)))];
    };
    return {
      nodes: () => src.nodes.list(),
      podsOnNode: (node) =>
        merge(
          src.pods.byIndex(POD_NODE_INDEX, node).filter((p) => !isTerminal(p)),
          assumed.filter((a) => a.node === node).map((a) => a.pod),
        ),
      assignedPodsUsingClaim: (ns, name) =>
        merge(
          src.pods.byIndex(POD_CLAIM_INDEX, `${ns}/${name}`).filter((p) => p.spec?.nodeName && !isTerminal(p)),
          assumed.filter((a) => podClaimKeys(a.pod).includes(`${ns}/${name}`)).map((a) => a.pod),
        ),
      claim: (ns, name) => src.claims.get(ns, name),
      volume: volumeOf,
      volumes: () => src.volumes.list().map((v) => volumeOf(nameOf(v)) ?? v),
      storageClass: (name) => src.classes.get(name),
      csiNode: (name) => src.csiNodes.get(name),
      csiDriver: (name) => src.csiDrivers.get(name),
      storageCapacities: () => src.capacities.list(),
    };
  }
}
