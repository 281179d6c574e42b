/**
 * The daemon controller's decisions (kube's daemon_controller.go manage / podsShouldBeOnNode /
 * updateDaemonSetStatus and update.go rollingUpdate): given the set, the nodes, the pods it
 * controls and the current revision's hash, which nodes get a new pod, which pods go, and the
 * status. One pass either manages (pods for nodes lacking one, none where they should not be, one
 * per node) or, once nothing is left to manage, takes the next RollingUpdate step. Pure.
 */
import type { DaemonSet, DaemonSetStatus } from 'kubernetes-types/apps/v1.js';
import type { Node, Pod } from 'kubernetes-types/core/v1.js';
import { CONTROLLER_REVISION_HASH_LABEL, isPodAvailable, isPodReady } from '../../kube/workloads.js';
import {
  allowsSurge,
  byCreationAndPhase,
  isPodUpdated,
  nodeShouldRunDaemonPod,
  rollingBounds,
  targetNodeName,
  templateGeneration,
} from './util.js';

export interface DaemonState {
  readonly ds: DaemonSet;
  readonly nodes: readonly Node[];
  /** The pods the set controls. */
  readonly pods: readonly Pod[];
  /** The current revision's hash (the pods' controller-revision-hash). */
  readonly hash: string;
  /** ms since epoch, for minReadySeconds. */
  readonly now: number;
  /** ms left before a failed pod on `node` may be killed again (kube's failedPodsBackoff); undefined: not backing off. */
  readonly failedBackoffMs?: (node: string) => number | undefined;
}

export interface DaemonDecision {
  /** Nodes that get a new pod. */
  readonly create: readonly string[];
  readonly delete: readonly Pod[];
  /** The failed pods among `delete` (a FailedDaemonPod event each, and their node's backoff advances). */
  readonly failed: readonly Pod[];
  /** Look again after this long (a failed pod's backoff, a pod becoming available). */
  readonly requeueAfterMs?: number;
}

const isTerminal = (p: Pod): boolean => p.status?.phase === 'Failed' || p.status?.phase === 'Succeeded';

/**
 * getNodesToDaemonPods: the pods by the node they are for; terminal pods already being deleted
 * are left out (the kubelet or pod GC finishes them), as are pods naming no single node.
 */
export function podsByNode(pods: readonly Pod[]): Map<string, Pod[]> {
  const out = new Map<string, Pod[]>();
  for (const p of pods) {
    if (isTerminal(p) && p.metadata?.deletionTimestamp) continue;
    const node = targetNodeName(p);
    if (node === undefined) continue;
    const list = out.get(node) ?? [];
    list.push(p);
    out.set(node, list);
  }
  return out;
}

const minReady = (ds: DaemonSet): number => ds.spec?.minReadySeconds ?? 0;

interface NodeOutcome {
  create: boolean;
  delete: Pod[];
  failed: Pod[];
  retryAfterMs?: number;
}

/** podsShouldBeOnNode: what one node needs. */
function podsShouldBeOnNode(s: DaemonState, node: Node, daemonPods: readonly Pod[] | undefined): NodeOutcome {
  const { shouldRun, shouldContinueRunning } = nodeShouldRunDaemonPod(s.ds, node);
  const out: NodeOutcome = { create: false, delete: [], failed: [] };
  if (shouldRun && daemonPods === undefined) {
    out.create = true;
    return out;
  }
  if (!daemonPods) return out;
  if (!shouldContinueRunning) {
    out.delete = daemonPods.filter((p) => !p.metadata?.deletionTimestamp);
    return out;
  }
  const running: Pod[] = [];
  for (const p of daemonPods) {
    if (p.metadata?.deletionTimestamp) continue;
    if (p.status?.phase === 'Failed') {
      // The kubelet may keep rejecting the pod: kill it no faster than the node's backoff allows.
      const wait = s.failedBackoffMs?.(node.metadata?.name ?? '');
      if (wait !== undefined && wait > 0) {
        out.retryAfterMs = Math.min(out.retryAfterMs ?? wait, wait);
        continue;
      }
      out.delete.push(p);
      out.failed.push(p);
    } else if (p.status?.phase === 'Succeeded') out.delete.push(p);
    else running.push(p);
  }
  if (running.length <= 1) return out;
  running.sort(byCreationAndPhase);
  if (!allowsSurge(s.ds)) {
    // One pod per node: all but the oldest go.
    out.delete.push(...running.slice(1));
    return out;
  }
  // Under surge, two pods may share a node only while the oldest new one is not yet available and
  // the oldest old one is ready; every other pod goes.
  let oldestNew: Pod | undefined;
  let oldestOld: Pod | undefined;
  for (const p of running) {
    const isNew = p.metadata?.labels?.[CONTROLLER_REVISION_HASH_LABEL] === s.hash;
    if (isNew && !oldestNew) oldestNew = p;
    else if (!isNew && !oldestOld) oldestOld = p;
    else out.delete.push(p);
  }
  if (oldestNew && oldestOld) {
    if (!isPodReady(oldestOld) || isPodAvailable(oldestNew, minReady(s.ds), s.now)) out.delete.push(oldestOld);
  }
  return out;
}

/** manage: creations and deletions that bring every node to its one pod (or none). */
export function decideManage(s: DaemonState): DaemonDecision {
  const byNode = podsByNode(s.pods);
  const create: string[] = [];
  const del: Pod[] = [];
  const failed: Pod[] = [];
  let retry: number | undefined;
  const known = new Set<string>();
  for (const node of s.nodes) {
    const name = node.metadata?.name ?? '';
    known.add(name);
    const o = podsShouldBeOnNode(s, node, byNode.get(name));
    if (o.create) create.push(name);
    del.push(...o.delete);
    failed.push(...o.failed);
    if (o.retryAfterMs !== undefined) retry = Math.min(retry ?? o.retryAfterMs, o.retryAfterMs);
  }
  // getUnscheduledPodsWithoutNode: a pod pinned to a node that is gone and never scheduled goes;
  // a scheduled one is the pod GC's.
  for (const [node, pods] of byNode) {
    if (known.has(node)) continue;
    del.push(...pods.filter((p) => !p.spec?.nodeName && !p.metadata?.deletionTimestamp));
  }
  return { create, delete: del, failed, ...(retry !== undefined ? { requeueAfterMs: retry } : {}) };
}

/**
 * findUpdatedPodsOnNode: the node's new and old pod (not being deleted); `ok` false when it has
 * two of either (manage settles it first).
 */
function updatedPodsOnNode(s: DaemonState, pods: readonly Pod[]): { ok: boolean; newPod?: Pod; oldPod?: Pod } {
  const generation = templateGeneration(s.ds);
  let newPod: Pod | undefined;
  let oldPod: Pod | undefined;
  for (const p of pods) {
    if (p.metadata?.deletionTimestamp) continue;
    if (isPodUpdated(p, s.hash, generation)) {
      if (newPod) return { ok: false };
      newPod = p;
    } else {
      if (oldPod) return { ok: false };
      oldPod = p;
    }
  }
  return { ok: true, newPod, oldPod };
}

/** The nodes that should run the set's pod, and the pods by node with an (empty) entry for each of them. */
function desiredNodes(s: DaemonState): { desired: number; byNode: Map<string, Pod[]> } {
  const byNode = podsByNode(s.pods);
  let desired = 0;
  for (const node of s.nodes) {
    if (!nodeShouldRunDaemonPod(s.ds, node).shouldRun) continue;
    desired++;
    const name = node.metadata?.name ?? '';
    if (!byNode.has(name)) byNode.set(name, []);
  }
  return { desired, byNode };
}

/**
 * rollingUpdate: without surge, old pods are deleted (manage then creates their replacements)
 * while fewer than maxUnavailable nodes lack an available pod, unavailable old pods first and
 * always; with surge, new pods are created beside old ones on up to maxSurge nodes (at once where
 * the old pod is unavailable) and an old pod goes once its node's new pod is available.
 */
export function decideRollingUpdate(s: DaemonState): DaemonDecision {
  const { desired, byNode } = desiredNodes(s);
  const { maxSurge, maxUnavailable } = rollingBounds(s.ds, desired);
  const nodes = [...byNode.keys()].sort();
  const available = (p: Pod): boolean => isPodAvailable(p, minReady(s.ds), s.now);
  if (maxSurge === 0) {
    let unavailable = 0;
    const replace: Pod[] = [];
    const candidates: Pod[] = [];
    for (const node of nodes) {
      const { ok, newPod, oldPod } = updatedPodsOnNode(s, byNode.get(node) ?? []);
      if (!ok || (!oldPod && !newPod) || (oldPod && newPod)) unavailable++;
      else if (newPod) {
        if (!available(newPod)) unavailable++;
      } else if (oldPod) {
        if (!available(oldPod)) replace.push(oldPod);
        else if (unavailable < maxUnavailable) candidates.push(oldPod);
      }
    }
    const room = Math.min(Math.max(0, maxUnavailable - unavailable), candidates.length);
    return { create: [], delete: [...replace, ...candidates.slice(0, room)], failed: [] };
  }
  let surging = 0;
  const allowed: string[] = [];
  const candidates: string[] = [];
  const del: Pod[] = [];
  for (const node of nodes) {
    const { ok, newPod, oldPod } = updatedPodsOnNode(s, byNode.get(node) ?? []);
    if (!ok) surging++;
    else if (!oldPod) continue;
    else if (!newPod) {
      if (!available(oldPod)) allowed.push(node);
      else if (surging < maxSurge) candidates.push(node);
    } else if (!available(newPod)) surging++;
    else del.push(oldPod);
  }
  const room = Math.min(Math.max(0, maxSurge - surging), candidates.length);
  return { create: [...allowed, ...candidates.slice(0, room)], delete: del, failed: [] };
}

/**
 * One pass: manage; when manage has nothing to do (kube runs the update only once its
 * expectations are met), the RollingUpdate step. OnDelete never replaces a pod itself.
 */
export function decideDaemonSet(s: DaemonState): DaemonDecision {
  const managed = decideManage(s);
  if (managed.create.length || managed.delete.length) return managed;
  const type = s.ds.spec?.updateStrategy?.type ?? 'RollingUpdate';
  if (type !== 'RollingUpdate') return managed;
  const step = decideRollingUpdate(s);
  return managed.requeueAfterMs !== undefined ? { ...step, requeueAfterMs: managed.requeueAfterMs } : step;
}

/**
 * updateDaemonSetStatus' counts: per node that should run the pod, whether one is there, and of
 * its oldest pod whether it is ready, available and updated; pods on nodes that should not run
 * one are misscheduled. `observedGeneration` is the caller's.
 */
export function daemonStatus(s: DaemonState): Omit<DaemonSetStatus, 'observedGeneration' | 'collisionCount'> {
  const byNode = podsByNode(s.pods);
  const generation = templateGeneration(s.ds);
  let desired = 0;
  let current = 0;
  let misscheduled = 0;
  let ready = 0;
  let available = 0;
  let updated = 0;
  for (const node of s.nodes) {
    const pods = byNode.get(node.metadata?.name ?? '') ?? [];
    if (!nodeShouldRunDaemonPod(s.ds, node).shouldRun) {
      if (pods.length) misscheduled++;
      continue;
    }
    desired++;
    const pod = [...pods].sort(byCreationAndPhase)[0];
    if (!pod) continue;
    current++;
    if (isPodReady(pod)) {
      ready++;
      if (isPodAvailable(pod, minReady(s.ds), s.now)) available++;
    }
    if (isPodUpdated(pod, s.hash, generation)) updated++;
  }
  return {
    desiredNumberScheduled: desired,
    currentNumberScheduled: current,
    numberMisscheduled: misscheduled,
    numberReady: ready,
    numberAvailable: available,
    updatedNumberScheduled: updated,
    numberUnavailable: desired - available,
  };
}
