/**
 * The StatefulSet controller's decision (stateful_set_control.go updateStatefulSet): given the set,
 * its current and update revisions, its pods and the claims in its namespace, what to write next
 * and the status to report. OrderedReady creates ordinals in order, each Running and Ready before
 * the next, and removes the highest ordinal first, one at a time; Parallel does not wait. A
 * RollingUpdate replaces pods from the highest ordinal down to the partition, one at a time, each
 * once the others are healthy; OnDelete replaces only pods someone deleted. Pure.
 */
import type { StatefulSet, StatefulSetStatus } from 'kubernetes-types/apps/v1.js';
import type { PersistentVolumeClaim, Pod, PodTemplateSpec } from 'kubernetes-types/core/v1.js';
import {
  claimOwnerReferences,
  inOrdinalRange,
  newPod,
  podClaims,
  podOrdinal,
  podRevision,
  startOrdinal,
} from './identity.js';

export interface RevisionRef {
  readonly name: string;
  readonly template: PodTemplateSpec;
}

export interface SetState {
  readonly set: StatefulSet;
  readonly current: RevisionRef;
  readonly update: RevisionRef;
  /** The pods the set controls. */
  readonly pods: readonly Pod[];
  readonly claim: (name: string) => PersistentVolumeClaim | undefined;
  /** ms since epoch, for minReadySeconds. */
  readonly now: number;
}

export type SetAction =
  | { readonly kind: 'createClaim'; readonly claim: PersistentVolumeClaim; readonly pod: string }
  | { readonly kind: 'createPod'; readonly pod: Pod }
  | { readonly kind: 'deletePod'; readonly pod: Pod; readonly why: 'condemned' | 'update' | 'failed' }
  | {
      readonly kind: 'setClaimOwners';
      readonly claim: PersistentVolumeClaim;
      readonly ownerReferences: NonNullable<PersistentVolumeClaim['metadata']>['ownerReferences'];
    };

export interface SetDecision {
  readonly actions: readonly SetAction[];
  readonly status: StatefulSetStatus;
  /** Look again after this long (a pod becoming available after minReadySeconds). */
  readonly requeueAfterMs?: number;
}

const isCreated = (p: Pod): boolean => !!p.status?.phase;
const isTerminating = (p: Pod): boolean => !!p.metadata?.deletionTimestamp;
const isFinished = (p: Pod): boolean => p.status?.phase === 'Failed' || p.status?.phase === 'Succeeded';

function readySince(p: Pod): number | undefined {
  if (p.status?.phase !== 'Running') return undefined;
  const c = (p.status.conditions ?? []).find((x) => x.type === 'Ready');
  if (c?.status !== 'True') return undefined;
  const t = Date.parse(c.lastTransitionTime ?? '');
  return Number.isNaN(t) ? 0 : t;
}

/** isRunningAndReady. */
export function isRunningAndReady(p: Pod): boolean {
  return readySince(p) !== undefined;
}

/** isRunningAndAvailable: ready for at least minReadySeconds. */
function availableIn(p: Pod, minReadySeconds: number, now: number): number | undefined {
  const since = readySince(p);
  if (since === undefined) return undefined;
  return Math.max(0, since + minReadySeconds * 1000 - now);
}

const isHealthy = (p: Pod): boolean => isRunningAndReady(p) && !isTerminating(p);

/** computeReplicaStatus plus the revisions, and completeRollingUpdate's promotion of the update revision. */
export function setStatus(s: SetState): StatefulSetStatus {
  const minReady = s.set.spec?.minReadySeconds ?? 0;
  let replicas = 0;
  let ready = 0;
  let available = 0;
  let current = 0;
  let updated = 0;
  for (const p of s.pods) {
    if (isCreated(p)) replicas++;
    if (isRunningAndReady(p)) {
      ready++;
      if (availableIn(p, minReady, s.now) === 0) available++;
    }
    if (isCreated(p) && !isTerminating(p)) {
      if (podRevision(p) === s.current.name) current++;
      if (podRevision(p) === s.update.name) updated++;
    }
  }
  const status: StatefulSetStatus = {
    observedGeneration: s.set.metadata?.generation,
    replicas,
    readyReplicas: ready,
    currentReplicas: current,
    updatedReplicas: updated,
    availableReplicas: available,
    currentRevision: s.current.name,
    updateRevision: s.update.name,
    collisionCount: s.set.status?.collisionCount ?? 0,
  };
  if (s.set.spec?.updateStrategy?.type !== 'OnDelete' && updated === replicas && ready === replicas) {
    status.currentReplicas = updated;
    status.currentRevision = s.update.name;
  }
  // `omitempty` counters (replicas and availableReplicas are always written).
  for (const k of ['readyReplicas', 'currentReplicas', 'updatedReplicas'] as const) if (!status[k]) delete status[k];
  return status;
}

/** Which revision a missing pod is made from: below the partition, the current one. */
function revisionForOrdinal(s: SetState, ordinal: number): RevisionRef {
  const strategy = s.set.spec?.updateStrategy;
  if (strategy?.type === 'OnDelete' || strategy?.type === undefined) return s.update;
  const partition = strategy.rollingUpdate?.partition ?? 0;
  return ordinal < startOrdinal(s.set) + partition ? s.current : s.update;
}

function claimActions(s: SetState, pod: Pod | undefined, ordinal: number, scaledDown: boolean): SetAction[] {
  const out: SetAction[] = [];
  for (const want of podClaims(s.set, ordinal)) {
    const have = s.claim(want.metadata?.name ?? '');
    if (!have) continue;
    const refs = claimOwnerReferences(s.set, have, pod, scaledDown);
    if (JSON.stringify(refs) !== JSON.stringify(have.metadata?.ownerReferences ?? []))
      out.push({ kind: 'setClaimOwners', claim: have, ownerReferences: refs });
  }
  return out;
}

/** What creating the pod at `ordinal` takes now: its missing claims then the pod; blocked while a claim is going away. */
function createActions(s: SetState, ordinal: number): { actions: SetAction[]; blocked: boolean } {
  const rev = revisionForOrdinal(s, ordinal);
  const pod = newPod(s.set, rev.template, rev.name, ordinal);
  const actions: SetAction[] = [];
  for (const want of podClaims(s.set, ordinal)) {
    const have = s.claim(want.metadata?.name ?? '');
    // A claim being deleted, or still owned by a pod that is gone, is not reused: wait until it is gone
    // (never replaced while it exists; PodClaimIsStale).
    if (
      have &&
      (have.metadata?.deletionTimestamp || (have.metadata?.ownerReferences ?? []).some((r) => r.kind === 'Pod'))
    ) {
      return { actions, blocked: true };
    }
    if (!have) {
      want.metadata!.ownerReferences = claimOwnerReferences(s.set, want, undefined, false);
      if (want.metadata!.ownerReferences.length === 0) delete want.metadata!.ownerReferences;
      actions.push({ kind: 'createClaim', claim: want, pod: pod.metadata?.name ?? '' });
    }
  }
  actions.push({ kind: 'createPod', pod });
  return { actions, blocked: false };
}

/** The next writes for the set (see the module comment), and its status. */
export function decideStatefulSet(s: SetState): SetDecision {
  const status = setStatus(s);
  if (s.set.metadata?.deletionTimestamp) return { actions: [], status };
  const monotonic = s.set.spec?.podManagementPolicy !== 'Parallel';
  const minReady = s.set.spec?.minReadySeconds ?? 0;
  const start = startOrdinal(s.set);
  const count = s.set.spec?.replicas ?? 1;
  const replicas = new Map<number, Pod>();
  const condemned: Pod[] = [];
  for (const p of s.pods) {
    const o = podOrdinal(s.set, p);
    if (o >= 0 && inOrdinalRange(s.set, o)) replicas.set(o, p);
    else condemned.push(p);
  }
  condemned.sort((a, b) => podOrdinal(s.set, b) - podOrdinal(s.set, a));
  const actions: SetAction[] = [];
  let requeueAfterMs: number | undefined;
  const wait = (ms: number): void => {
    requeueAfterMs = requeueAfterMs === undefined ? ms : Math.min(requeueAfterMs, ms);
  };
  const done = (): SetDecision => ({ actions, status, ...(requeueAfterMs !== undefined ? { requeueAfterMs } : {}) });

  // Claims of pods being scaled away get their owners first, so whenScaled: Delete takes them with the pod.
  for (const p of condemned) actions.push(...claimActions(s, p, podOrdinal(s.set, p), true));

  for (let o = start; o < start + count; o++) {
    const pod = replicas.get(o);
    if (pod && isFinished(pod)) {
      // A failed or completed pod is deleted and made again on a later pass, once it is gone.
      if (!isTerminating(pod)) actions.push({ kind: 'deletePod', pod, why: 'failed' });
      if (monotonic) return done();
      continue;
    }
    if (!pod) {
      // Created (or waiting for a claim to go): OrderedReady looks again once the pod is ready.
      actions.push(...createActions(s, o).actions);
      if (monotonic) return done();
      continue;
    }
    // A pending pod whose claim was deleted gets it again (createMissingPersistentVolumeClaims).
    if (pod.status?.phase === 'Pending' && !isTerminating(pod)) {
      for (const want of podClaims(s.set, o)) {
        if (s.claim(want.metadata?.name ?? '')) continue;
        const refs = claimOwnerReferences(s.set, want, pod, false);
        actions.push({
          kind: 'createClaim',
          claim: { ...want, metadata: { ...want.metadata, ...(refs.length ? { ownerReferences: refs } : {}) } },
          pod: pod.metadata?.name ?? '',
        });
      }
    }
    if (monotonic && (isTerminating(pod) || !isRunningAndReady(pod))) return done();
    const left = availableIn(pod, minReady, s.now);
    if (monotonic && left !== 0) {
      if (left !== undefined) wait(left);
      return done();
    }
    actions.push(...claimActions(s, pod, o, false));
  }

  // Scale down: the highest ordinal first; in OrderedReady one at a time, and only once the others are healthy.
  const firstUnhealthy = [...[...replicas.entries()].sort((a, b) => a[0] - b[0]).map(([, p]) => p), ...condemned].find(
    (p) => !isHealthy(p),
  );
  for (const p of condemned) {
    if (isTerminating(p)) {
      if (monotonic) return done();
      continue;
    }
    if (monotonic && !isRunningAndReady(p) && p !== firstUnhealthy) return done();
    actions.push({ kind: 'deletePod', pod: p, why: 'condemned' });
    if (monotonic) return done();
  }

  // Rolling update: from the highest ordinal down to the partition, one pod at a time.
  const strategy = s.set.spec?.updateStrategy;
  if (strategy?.type === 'OnDelete') return done();
  const partition = strategy?.rollingUpdate?.partition ?? 0;
  for (let o = start + count - 1; o >= start + partition; o--) {
    const pod = replicas.get(o);
    if (!pod) return done();
    if (podRevision(pod) !== s.update.name && !isTerminating(pod)) {
      actions.push({ kind: 'deletePod', pod, why: 'update' });
      return done();
    }
    if (!isHealthy(pod)) return done();
  }
  return done();
}
