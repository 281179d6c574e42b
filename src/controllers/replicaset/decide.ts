/**
 * What the ReplicaSet controller does for one ReplicaSet, as a pure function of the ReplicaSet and
 * the pods of its namespace (kube's syncReplicaSet): which orphans to adopt and which pods to
 * release (ClaimPods), how many pods to create or which to delete, and the status to write.
 */
import type { ReplicaSet, ReplicaSetCondition, ReplicaSetStatus } from 'kubernetes-types/apps/v1.js';
import type { Pod } from 'kubernetes-types/core/v1.js';
import {
  isPodActive,
  isPodAvailable,
  isPodReady,
  msUntilAvailable,
  newControllerRef,
  podsToDelete,
} from '../../kube/workloads.js';
import { claimObjects, type Claimed } from '../refmanager.js';

/** kube's BurstReplicas: at most this many pods created or deleted in one sync. */
export const BURST_REPLICAS = 500;

export interface ReplicaSetPlan {
  /** Orphans the selector matches: they get this ReplicaSet's controller reference. */
  readonly adopt: readonly Pod[];
  /** Owned pods the selector no longer matches: their controller reference goes. */
  readonly release: readonly Pod[];
  /** Pods to create from the template (0 when none or while the ReplicaSet is deleted). */
  readonly create: number;
  readonly delete: readonly Pod[];
  readonly status: ReplicaSetStatus;
  /** Look again then: a ready pod becomes available after minReadySeconds. */
  readonly requeueAfterMs?: number;
}

/** ClaimPods: the pods this ReplicaSet controls after adoption and release, and those two lists. */
export function claimPods(rs: ReplicaSet, pods: readonly Pod[]): Claimed<Pod> {
  return claimObjects(rs, pods);
}

function templateLabelsMatch(rs: ReplicaSet, p: Pod): boolean {
  const want = rs.spec?.template?.metadata?.labels ?? {};
  return Object.entries(want).every(([k, v]) => p.metadata?.labels?.[k] === v);
}

/** calculateStatus: counts over the active pods, and the ReplicaFailure condition from a manage error. */
export function replicaSetStatus(
  rs: ReplicaSet,
  active: readonly Pod[],
  nowMs: number,
  manageError?: { reason: string; message: string; now: string },
): ReplicaSetStatus {
  const minReady = rs.spec?.minReadySeconds ?? 0;
  const conditions: ReplicaSetCondition[] = (rs.status?.conditions ?? []).filter((c) => c.type !== 'ReplicaFailure');
  const prev = (rs.status?.conditions ?? []).find((c) => c.type === 'ReplicaFailure');
  if (manageError) {
    conditions.push({
      type: 'ReplicaFailure',
      status: 'True',
      reason: manageError.reason,
      message: manageError.message,
      lastTransitionTime: prev?.status === 'True' ? prev.lastTransitionTime : manageError.now,
    });
  }
  const status: ReplicaSetStatus = {
    replicas: active.length,
    fullyLabeledReplicas: active.filter((p) => templateLabelsMatch(rs, p)).length,
    readyReplicas: active.filter(isPodReady).length,
    availableReplicas: active.filter((p) => isPodAvailable(p, minReady, nowMs)).length,
    observedGeneration: rs.metadata?.generation ?? 0,
  };
  if (conditions.length) status.conditions = conditions;
  return status;
}

/** syncReplicaSet's decisions at `nowMs`; `related` are the pods of its sibling ReplicaSets (same Deployment), for the deletion ranks. */
export function planReplicaSet(
  rs: ReplicaSet,
  pods: readonly Pod[],
  nowMs: number,
  related: readonly Pod[] = [],
): ReplicaSetPlan {
  const { owned, adopt, release } = claimPods(rs, pods);
  const active = owned.filter(isPodActive);
  const want = rs.spec?.replicas ?? 1;
  const deleting = !!rs.metadata?.deletionTimestamp;
  const diff = active.length - want;
  const create = !deleting && diff < 0 ? Math.min(-diff, BURST_REPLICAS) : 0;
  const del =
    !deleting && diff > 0
      ? podsToDelete(active, Math.min(diff, BURST_REPLICAS), nowMs, [...active, ...related.filter(isPodActive)])
      : [];
  const waits = active
    .map((p) => msUntilAvailable(p, rs.spec?.minReadySeconds ?? 0, nowMs))
    .filter((x): x is number => x !== undefined);
  const status = replicaSetStatus(rs, active, nowMs);
  return {
    adopt,
    release,
    create,
    delete: del,
    status,
    ...(waits.length ? { requeueAfterMs: Math.min(...waits) } : {}),
  };
}

/** GetPodFromTemplate: a pod of the template, named `<rs>-<random>`, controlled by the ReplicaSet. */
export function podFromTemplate(rs: ReplicaSet): Pod {
  const t = rs.spec?.template;
  const labels = { ...(t?.metadata?.labels ?? {}) };
  const annotations = { ...(t?.metadata?.annotations ?? {}) };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: `${rs.metadata?.name ?? ''}-`,
      namespace: rs.metadata?.namespace,
      labels,
      ...(Object.keys(annotations).length ? { annotations } : {}),
      ...(t?.metadata?.finalizers?.length ? { finalizers: [...t.metadata.finalizers] } : {}),
      ownerReferences: [newControllerRef(rs, 'apps/v1', 'ReplicaSet')],
    },
    spec: structuredClone(t?.spec ?? { containers: [] }),
  };
}
