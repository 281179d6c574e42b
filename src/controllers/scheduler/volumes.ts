/**
 * The volume filters of kube-scheduler v1.30 as pure functions over a ClusterView:
 * VolumeBinding (PreFilter claim classification; Filter = FindPodVolumes), VolumeRestrictions
 * (ReadWriteOncePod) and NodeVolumeLimits (CSINode allocatable.count).
 *
 * Stowage addition: provisioning on a node also requires the provisioner's CSI driver on the
 * node's CSINode with all its topology keys among the node's labels — the external provisioner
 * would fail on such a node anyway, and failing here keeps the pod pending with a reason instead.
 */
import { findBestMatchLinear, volumeNodeAffinityMatches } from '../persistentvolume/match.js';
import { claimNotForPodMessage, isControlledBy, podVolumeClaimName } from '../../kube/ephemeral.js';
import { claimClass } from '../../kube/class.js';
import { quantityValue } from '../../kube/quantity.js';
import { compileLabelSelector } from '../persistentvolume/selector.js';
import { topologyTermsMatch } from './nodes.js';
import {
  ANN_BIND_COMPLETED,
  ANN_SELECTED_NODE,
  MSG_UNBOUND_IMMEDIATE,
  REASONS,
  podClaimNames,
  type ClusterView,
  type CSIStorageCapacity,
  type Node,
  type NodeFailure,
  type PersistentVolume,
  type PersistentVolumeClaim,
  type Pod,
  type Reason,
} from './types.js';
import { nameOf } from '../../kube/meta.js';

const NOT_SUPPORTED_PROVISIONER = 'kubernetes.io/no-provisioner';

/** A claim counts as bound once the PV controller finished (volumeName + bind-completed), as kube's isPVCFullyBound. */
export function isClaimFullyBound(c: PersistentVolumeClaim): boolean {
  return (c.spec?.volumeName ?? '') !== '' && c.metadata?.annotations?.[ANN_BIND_COMPLETED] !== undefined;
}

export type ClaimClassification =
  | {
      readonly kind: 'ok';
      readonly bound: readonly PersistentVolumeClaim[];
      readonly delayed: readonly PersistentVolumeClaim[];
    }
  | { readonly kind: 'reject'; readonly message: string };

/** VolumeBinding PreFilter (GetPodVolumes): bound claims, WaitForFirstConsumer claims to bind, or a whole-pod rejection. */
export function classifyClaims(pod: Pod, view: ClusterView): ClaimClassification {
  const ns = pod.metadata?.namespace ?? '';
  const bound: PersistentVolumeClaim[] = [];
  const delayed: PersistentVolumeClaim[] = [];
  let immediate = 0;
  for (const v of pod.spec?.volumes ?? []) {
    const ephemeral = v.ephemeral !== undefined;
    const name = podVolumeClaimName(pod, v);
    if (!name) continue;
    const c = view.claim(ns, name);
    if (!c) {
      const message = ephemeral
        ? `waiting for ephemeral volume controller to create the persistentvolumeclaim "${name}"`
        : `persistentvolumeclaim "${name}" not found`;
      return { kind: 'reject', message };
    }
    if (c.metadata?.deletionTimestamp)
      return { kind: 'reject', message: `persistentvolumeclaim "${name}" is being deleted` };
    if (ephemeral && !isControlledBy(c, pod.metadata?.uid)) {
      return { kind: 'reject', message: claimNotForPodMessage(c, pod) };
    }
    if (isClaimFullyBound(c)) {
      bound.push(c);
      continue;
    }
    const clsName = claimClass(c);
    let delay = false;
    if (clsName !== '') {
      const cls = view.storageClass(clsName);
      if (!cls) return { kind: 'reject', message: `storageclass.storage.k8s.io "${clsName}" not found` };
      delay = cls.volumeBindingMode === 'WaitForFirstConsumer';
    }
    // A claim pre-bound to a named volume is the PV controller's to finish, like an immediate one.
    if (delay && (c.spec?.volumeName ?? '') === '') delayed.push(c);
    else immediate++;
  }
  if (immediate > 0) return { kind: 'reject', message: MSG_UNBOUND_IMMEDIATE };
  return { kind: 'ok', bound, delayed };
}

/** VolumeRestrictions: a ReadWriteOncePod claim already used by another assigned pod. Same answer on every node. */
export function readWriteOncePodConflict(pod: Pod, view: ClusterView): boolean {
  const ns = pod.metadata?.namespace ?? '';
  const uid = pod.metadata?.uid;
  for (const name of podClaimNames(pod)) {
    const c = view.claim(ns, name);
    if (!c?.spec?.accessModes?.includes('ReadWriteOncePod')) continue;
    const others = view
      .assignedPodsUsingClaim(ns, name)
      .filter((p) => p.metadata?.uid !== uid || nameOf(p) !== nameOf(pod));
    if (others.length > 0) return true;
  }
  return false;
}

/** Attachable-volume identities of a pod, per CSI driver (csi.go: handle for bound claims, namespace-claim for pending ones). */
export function podVolumeKeys(pod: Pod, view: ClusterView): Map<string, Set<string>> {
  const ns = pod.metadata?.namespace ?? '';
  const out = new Map<string, Set<string>>();
  const add = (driver: string, key: string): void => {
    let s = out.get(driver);
    if (!s) out.set(driver, (s = new Set()));
    s.add(key);
  };
  for (const name of podClaimNames(pod)) {
    const c = view.claim(ns, name);
    if (!c) continue;
    const pvName = c.spec?.volumeName ?? '';
    if (pvName !== '') {
      const csi = view.volume(pvName)?.spec?.csi;
      if (csi) add(csi.driver, csi.volumeHandle);
      continue;
    }
    const cls = view.storageClass(claimClass(c));
    if (cls?.provisioner) add(cls.provisioner, `${ns}-${name}`);
  }
  return out;
}

/** Number of distinct attachable volumes used by pods on a node (for scoring). */
export function volumesOnNode(node: string, view: ClusterView): number {
  const seen = new Set<string>();
  for (const p of view.podsOnNode(node))
    for (const [d, keys] of podVolumeKeys(p, view)) for (const k of keys) seen.add(`${d}/${k}`);
  return seen.size;
}

/** NodeVolumeLimits: would this pod push any driver on the node past its CSINode allocatable.count? */
export function exceedsVolumeLimits(pod: Pod, node: Node, view: ClusterView): boolean {
  const csiNode = view.csiNode(nameOf(node));
  const limits = new Map<string, number>();
  for (const d of csiNode?.spec?.drivers ?? [])
    if (d.allocatable?.count !== undefined) limits.set(d.name, d.allocatable.count);
  if (limits.size === 0) return false;
  const wanted = podVolumeKeys(pod, view);
  if (wanted.size === 0) return false;
  const attached = new Map<string, Set<string>>();
  for (const p of view.podsOnNode(nameOf(node))) {
    if (p.metadata?.uid === pod.metadata?.uid && nameOf(p) === nameOf(pod)) continue;
    for (const [d, keys] of podVolumeKeys(p, view)) {
      let s = attached.get(d);
      if (!s) attached.set(d, (s = new Set()));
      for (const k of keys) s.add(k);
    }
  }
  for (const [driver, keys] of wanted) {
    const limit = limits.get(driver);
    if (limit === undefined) continue;
    const have = attached.get(driver) ?? new Set<string>();
    const fresh = [...keys].filter((k) => !have.has(k)).length;
    if (fresh > 0 && have.size + fresh > limit) return true;
  }
  return false;
}

export interface StaticBinding {
  readonly claim: PersistentVolumeClaim;
  readonly volume: PersistentVolume;
}

export interface PodVolumes {
  readonly staticBindings: readonly StaticBinding[];
  readonly provisions: readonly PersistentVolumeClaim[];
}

export type FindResult =
  | { readonly kind: 'fit'; readonly volumes: PodVolumes }
  | { readonly kind: 'conflict'; readonly reasons: readonly Reason[] };

function capacityServes(cap: CSIStorageCapacity, cls: string, bytes: bigint, node: Node): boolean {
  if (cap.storageClassName !== cls) return false;
  const limit = cap.maximumVolumeSize ?? cap.capacity;
  if (limit === undefined || quantityValue(limit) < bytes) return false;
  if (!cap.nodeTopology) return false; // no topology: usable nowhere
  try {
    return compileLabelSelector(cap.nodeTopology)(node.metadata?.labels ?? {});
  } catch {
    return false; // an invalid selector selects no node
  }
}

/**
 * hasEnoughCapacity: only for CSI drivers that opted in (CSIDriver storageCapacity: true), some
 * CSIStorageCapacity of the class must reach the node and hold the requested size.
 */
export function hasEnoughCapacity(
  c: PersistentVolumeClaim,
  provisioner: string,
  clsName: string,
  node: Node,
  view: ClusterView,
): boolean {
  const request = c.spec?.resources?.requests?.['storage'];
  if (request === undefined) return true;
  if (view.csiDriver(provisioner)?.spec?.storageCapacity !== true) return true;
  const bytes = quantityValue(request);
  return view.storageCapacities().some((cap) => capacityServes(cap, clsName, bytes, node));
}

export type ProvisionCheck = 'ok' | 'impossible' | 'noSpace';

/** Can this node provision the claim (class has a provisioner, allowedTopologies and the driver's CSINode topology fit, capacity)? */
export function canProvisionOn(c: PersistentVolumeClaim, node: Node, view: ClusterView): ProvisionCheck {
  const cls = view.storageClass(claimClass(c));
  const provisioner = cls?.provisioner ?? '';
  if (!cls || provisioner === '' || provisioner === NOT_SUPPORTED_PROVISIONER) return 'impossible';
  const labels = node.metadata?.labels ?? {};
  if (!topologyTermsMatch(cls.allowedTopologies, labels)) return 'impossible';
  if (!provisioner.startsWith('kubernetes.io/')) {
    // in-tree plugins have no CSINode entry
    const driver = view.csiNode(nameOf(node))?.spec?.drivers?.find((d) => d.name === provisioner);
    if (!driver || !(driver.topologyKeys ?? []).every((k) => labels[k] !== undefined)) return 'impossible';
  }
  return hasEnoughCapacity(c, provisioner, claimClass(c), node, view) ? 'ok' : 'noSpace';
}

/** VolumeBinding Filter (FindPodVolumes) for one node. */
export function findPodVolumes(
  bound: readonly PersistentVolumeClaim[],
  delayed: readonly PersistentVolumeClaim[],
  node: Node,
  view: ClusterView,
): FindResult {
  let nodeConflict = false;
  let pvMissing = false;
  for (const c of bound) {
    const pv = view.volume(c.spec?.volumeName ?? '');
    if (!pv) pvMissing = true;
    else if (!volumeNodeAffinityMatches(pv, node)) nodeConflict = true;
  }
  let bindConflict = false;
  let noSpace = false;
  const staticBindings: StaticBinding[] = [];
  const provisions: PersistentVolumeClaim[] = [];
  const chosen = new Set<string>();
  const provision = (c: PersistentVolumeClaim): void => {
    const r = canProvisionOn(c, node, view);
    if (r === 'ok') provisions.push(c);
    else if (r === 'noSpace') noSpace = true;
    else bindConflict = true;
  };
  for (const c of delayed) {
    const selected = c.metadata?.annotations?.[ANN_SELECTED_NODE];
    if (selected !== undefined) {
      // Provisioning already started for another node: this node cannot serve the claim.
      if (selected !== nameOf(node)) bindConflict = true;
      else provision(c);
      continue;
    }
    const candidates = view.volumes().filter((v) => !chosen.has(nameOf(v)));
    const pv = findBestMatchLinear(c, candidates, { delayBinding: true, node });
    if (pv) {
      chosen.add(nameOf(pv));
      staticBindings.push({ claim: c, volume: pv });
    } else provision(c);
  }
  const reasons: Reason[] = [];
  if (nodeConflict) reasons.push(REASONS.nodeConflict);
  if (bindConflict) reasons.push(REASONS.bindConflict);
  if (noSpace) reasons.push(REASONS.notEnoughSpace);
  if (pvMissing) reasons.push(REASONS.pvNotExist);
  if (reasons.length > 0) return { kind: 'conflict', reasons };
  return { kind: 'fit', volumes: { staticBindings, provisions } };
}

/** Volume filters in plugin order for one node: the failure, or the volume decisions when the node fits. */
export function volumeFilter(
  pod: Pod,
  node: Node,
  rwopConflict: boolean,
  bound: readonly PersistentVolumeClaim[],
  delayed: readonly PersistentVolumeClaim[],
  view: ClusterView,
): NodeFailure | PodVolumes {
  if (rwopConflict) return { code: 'Unschedulable', reasons: [REASONS.readWriteOncePodConflict] };
  if (exceedsVolumeLimits(pod, node, view)) return { code: 'Unschedulable', reasons: [REASONS.maxVolumeCount] };
  const r = findPodVolumes(bound, delayed, node, view);
  if (r.kind === 'conflict') return { code: 'UnschedulableAndUnresolvable', reasons: r.reasons };
  return r.volumes;
}
