/**
 * What the Deployment controller does for one Deployment in one sync, as a pure function of the
 * Deployment, the ReplicaSets it controls and their pods (kube's syncDeployment): create the new
 * ReplicaSet, scale ReplicaSets for a scaling event, a RollingUpdate step (maxSurge/maxUnavailable)
 * or a Recreate step (old pods all gone first), clean up history, and the status with its
 * Available/Progressing conditions.
 */
import type { Deployment, DeploymentCondition, DeploymentStatus, ReplicaSet } from 'kubernetes-types/apps/v1.js';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { newControllerRef } from '../../kube/workloads.js';
import {
  DESIRED_REPLICAS_ANNOTATION,
  MAX_REPLICAS_ANNOTATION,
  POD_TEMPLATE_HASH_LABEL,
  REVISION_ANNOTATION,
  availableReplicas,
  maxRevision,
  maxSurge,
  maxUnavailable,
  oldestFirst,
  readyReplicas,
  replicaSetAnnotations,
  replicasOf,
  revisionOf,
  specReplicas,
  statusReplicas,
  templateHash,
  templatesEqualIgnoringHash,
} from './util.js';

export type DeploymentAction =
  | { readonly kind: 'create'; readonly rs: ReplicaSet }
  /** New spec.replicas and annotations of a ReplicaSet (a scale when `replicas` differs). */
  | {
      readonly kind: 'update';
      readonly rs: ReplicaSet;
      readonly replicas: number;
      readonly annotations: Record<string, string>;
    }
  | { readonly kind: 'delete'; readonly rs: ReplicaSet };

export interface DeploymentPlan {
  readonly actions: readonly DeploymentAction[];
  /** The Deployment's revision annotation when it must change. */
  readonly revision?: string;
  readonly status: DeploymentStatus;
  /** Look again then (the progress deadline). */
  readonly requeueAfterMs?: number;
}

/** The inputs of one sync: the ReplicaSets the Deployment controls and the pods those control. */
export interface DeploymentView {
  readonly d: Deployment;
  readonly replicaSets: readonly ReplicaSet[];
  readonly podsOf: (rs: ReplicaSet) => readonly Pod[];
  readonly nowMs: number;
  readonly nowIso: string;
}

/** FindNewReplicaSet: the oldest ReplicaSet whose template is the Deployment's. */
export function findNewReplicaSet(d: Deployment, rss: readonly ReplicaSet[]): ReplicaSet | undefined {
  return oldestFirst(rss).find((rs) => templatesEqualIgnoringHash(rs.spec?.template, d.spec?.template));
}

/** The new ReplicaSet of a template: `<deployment>-<hash>`, the hash label on its selector, template and labels. */
export function newReplicaSetFor(d: Deployment, replicas: number, revision: number): ReplicaSet {
  const hash = templateHash(d.spec?.template, d.status?.collisionCount);
  const template = structuredClone(d.spec?.template ?? {});
  template.metadata = {
    ...(template.metadata ?? {}),
    labels: { ...(template.metadata?.labels ?? {}), [POD_TEMPLATE_HASH_LABEL]: hash },
  };
  const selector = structuredClone(d.spec?.selector ?? {});
  selector.matchLabels = { ...(selector.matchLabels ?? {}), [POD_TEMPLATE_HASH_LABEL]: hash };
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: {
      name: `${d.metadata?.name ?? ''}-${hash}`,
      namespace: d.metadata?.namespace,
      labels: { ...template.metadata.labels },
      annotations: replicaSetAnnotations(d, undefined, revision),
      ownerReferences: [newControllerRef(d, 'apps/v1', 'Deployment')],
    },
    spec: { replicas, minReadySeconds: d.spec?.minReadySeconds ?? 0, selector, template },
  };
}

/** NewRSNewReplicas: how big the new ReplicaSet may be now. */
export function newReplicaSetReplicas(
  d: Deployment,
  all: readonly ReplicaSet[],
  newRS: ReplicaSet | undefined,
): number {
  if ((d.spec?.strategy?.type ?? 'RollingUpdate') === 'Recreate') return replicasOf(d);
  const current = specReplicas(all);
  const newReplicas = newRS ? replicasOf(newRS) : 0;
  const maxTotal = replicasOf(d) + maxSurge(d);
  if (current >= maxTotal) return newReplicas;
  return newReplicas + Math.min(maxTotal - current, Math.max(0, replicasOf(d) - newReplicas));
}

/**
 * reconcileOldReplicaSets: how far each old ReplicaSet is scaled down in one RollingUpdate step —
 * first their unhealthy replicas, then healthy ones while availability stays at replicas - maxUnavailable.
 * Returns ReplicaSet name → new replicas for those that change.
 */
export function scaleDownOldReplicaSets(
  d: Deployment,
  newRS: ReplicaSet | undefined,
  oldRSs: readonly ReplicaSet[],
): Map<string, number> {
  const out = new Map<string, number>();
  if (specReplicas(oldRSs) === 0) return out;
  const all = newRS ? [newRS, ...oldRSs] : [...oldRSs];
  const minAvailable = replicasOf(d) - maxUnavailable(d);
  const newUnavailable = newRS ? replicasOf(newRS) - (newRS.status?.availableReplicas ?? 0) : 0;
  const maxScaledDown = specReplicas(all) - minAvailable - newUnavailable;
  if (maxScaledDown <= 0) return out;
  const size = (rs: ReplicaSet): number => out.get(rs.metadata?.name ?? '') ?? replicasOf(rs);
  // cleanupUnhealthyReplicas: old replicas that are not available go first, oldest ReplicaSet first.
  let cleaned = 0;
  for (const rs of oldestFirst(oldRSs)) {
    if (cleaned >= maxScaledDown) break;
    const unhealthy = replicasOf(rs) - (rs.status?.availableReplicas ?? 0);
    if (replicasOf(rs) === 0 || unhealthy <= 0) continue;
    const down = Math.min(maxScaledDown - cleaned, unhealthy);
    out.set(rs.metadata?.name ?? '', replicasOf(rs) - down);
    cleaned += down;
  }
  // scaleDownOldReplicaSetsForRollingUpdate: then available ones, keeping minAvailable.
  const available = availableReplicas(all);
  if (available <= minAvailable) return out;
  let total = available - minAvailable;
  for (const rs of oldestFirst(oldRSs)) {
    if (total <= 0) break;
    const cur = size(rs);
    if (cur === 0) continue;
    const down = Math.min(cur, total);
    out.set(rs.metadata?.name ?? '', cur - down);
    total -= down;
  }
  return out;
}

/** oldPodsRunning: old ReplicaSets still have pods that have not finished — terminating ones included. */
export function oldPodsRunning(
  newRS: ReplicaSet | undefined,
  oldRSs: readonly ReplicaSet[],
  podsOf: (rs: ReplicaSet) => readonly Pod[],
): boolean {
  if (statusReplicas(oldRSs) > 0) return true;
  return oldRSs.some(
    (rs) =>
      rs.metadata?.uid !== newRS?.metadata?.uid &&
      podsOf(rs).some((p) => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed'),
  );
}

function condition(status: DeploymentStatus, type: string): DeploymentCondition | undefined {
  return (status.conditions ?? []).find((c) => c.type === type);
}

function setCondition(
  status: DeploymentStatus,
  c: Omit<DeploymentCondition, 'lastTransitionTime' | 'lastUpdateTime'>,
  nowIso: string,
): void {
  const prev = condition(status, c.type);
  if (prev && prev.status === c.status && prev.reason === c.reason) {
    // Same condition: only lastUpdateTime moves when the message changes (SetDeploymentCondition keeps the transition time).
    if (prev.message !== c.message) Object.assign(prev, { message: c.message, lastUpdateTime: nowIso });
    return;
  }
  const lastTransitionTime = prev && prev.status === c.status ? prev.lastTransitionTime : nowIso;
  const next: DeploymentCondition = { ...c, lastUpdateTime: nowIso, lastTransitionTime };
  status.conditions = [...(status.conditions ?? []).filter((x) => x.type !== c.type), next];
}

/** calculateStatus with the Available condition. */
function calculateStatus(
  d: Deployment,
  all: readonly ReplicaSet[],
  newRS: ReplicaSet | undefined,
  nowIso: string,
): DeploymentStatus {
  const available = availableReplicas(all);
  const status: DeploymentStatus = {
    observedGeneration: d.metadata?.generation ?? 0,
    replicas: statusReplicas(all),
    updatedReplicas: newRS ? (newRS.status?.replicas ?? 0) : 0,
    readyReplicas: readyReplicas(all),
    availableReplicas: available,
    unavailableReplicas: Math.max(0, specReplicas(all) - available),
    ...(d.status?.collisionCount !== undefined ? { collisionCount: d.status.collisionCount } : {}),
    ...(d.status?.conditions ? { conditions: structuredClone(d.status.conditions) } : {}),
  };
  if (available >= replicasOf(d) - maxUnavailable(d)) {
    setCondition(
      status,
      {
        type: 'Available',
        status: 'True',
        reason: 'MinimumReplicasAvailable',
        message: 'Deployment has minimum availability.',
      },
      nowIso,
    );
  } else {
    setCondition(
      status,
      {
        type: 'Available',
        status: 'False',
        reason: 'MinimumReplicasUnavailable',
        message: 'Deployment does not have minimum availability.',
      },
      nowIso,
    );
  }
  // Zero counts are omitted, as Go's omitempty drops them.
  for (const k of ['replicas', 'updatedReplicas', 'readyReplicas', 'availableReplicas', 'unavailableReplicas'] as const)
    if (status[k] === 0) delete status[k];
  return status;
}

const NEW_RS_AVAILABLE = 'NewReplicaSetAvailable';
const TIMED_OUT = 'ProgressDeadlineExceeded';

/** DeploymentComplete: every replica updated and available, and the latest generation observed. */
function complete(d: Deployment, s: DeploymentStatus): boolean {
  const want = replicasOf(d);
  return (
    (s.updatedReplicas ?? 0) === want &&
    (s.replicas ?? 0) === want &&
    (s.availableReplicas ?? 0) === want &&
    (s.observedGeneration ?? 0) >= (d.metadata?.generation ?? 0)
  );
}

/** DeploymentProgressing: more updated, ready or available replicas, or fewer old ones, than last recorded. */
function progressing(d: Deployment, s: DeploymentStatus): boolean {
  const o = d.status ?? {};
  const oldOld = (o.replicas ?? 0) - (o.updatedReplicas ?? 0);
  const newOld = (s.replicas ?? 0) - (s.updatedReplicas ?? 0);
  return (
    (s.updatedReplicas ?? 0) > (o.updatedReplicas ?? 0) ||
    newOld < oldOld ||
    (s.readyReplicas ?? 0) > (o.readyReplicas ?? 0) ||
    (s.availableReplicas ?? 0) > (o.availableReplicas ?? 0)
  );
}

/** syncRolloutStatus's Progressing condition, and when the progress deadline falls. */
function rolloutStatus(
  d: Deployment,
  s: DeploymentStatus,
  newRS: ReplicaSet | undefined,
  nowMs: number,
  nowIso: string,
): number | undefined {
  if (d.spec?.paused) return undefined;
  const name = newRS?.metadata?.name ?? '';
  const cur = condition(s, 'Progressing');
  const deadlineMs = (d.spec?.progressDeadlineSeconds ?? 600) * 1000;
  if (complete(d, s)) {
    setCondition(
      s,
      {
        type: 'Progressing',
        status: 'True',
        reason: NEW_RS_AVAILABLE,
        message: `ReplicaSet "${name}" has successfully progressed.`,
      },
      nowIso,
    );
    return undefined;
  }
  if (progressing(d, s)) {
    const prev = condition(s, 'Progressing');
    setCondition(
      s,
      {
        type: 'Progressing',
        status: 'True',
        reason: 'ReplicaSetUpdated',
        message: `ReplicaSet "${name}" is progressing.`,
      },
      nowIso,
    );
    // Progress moves the deadline: the update time restarts even when the condition stays the same.
    const now = condition(s, 'Progressing');
    if (prev && now && prev === now) now.lastUpdateTime = nowIso;
    return deadlineMs;
  }
  if (cur && cur.reason !== NEW_RS_AVAILABLE && cur.reason !== TIMED_OUT) {
    const since = Date.parse(cur.lastUpdateTime ?? '');
    if (!Number.isNaN(since) && since + deadlineMs <= nowMs) {
      setCondition(
        s,
        {
          type: 'Progressing',
          status: 'False',
          reason: TIMED_OUT,
          message: `ReplicaSet "${name}" has timed out progressing.`,
        },
        nowIso,
      );
      return undefined;
    }
    if (!Number.isNaN(since)) return since + deadlineMs - nowMs;
  }
  return undefined;
}

/** Actions that bring `rs` to `replicas` with the Deployment's annotations (none when nothing changes). */
function resizeTo(d: Deployment, rs: ReplicaSet, replicas: number, revision?: number): DeploymentAction[] {
  const annotations = replicaSetAnnotations(d, rs, revision ?? revisionOf(rs));
  // The desired/max annotations are only rewritten with a scale or on a new revision (kube's scaleReplicaSet).
  const cur = rs.metadata?.annotations ?? {};
  const same = replicas === replicasOf(rs) && JSON.stringify(annotations) === JSON.stringify(cur);
  return same ? [] : [{ kind: 'update', rs, replicas, annotations }];
}

/** dc.scale: a scaling event (or a paused Deployment) resizes the ReplicaSets without rolling. */
function scaleActions(
  d: Deployment,
  newRS: ReplicaSet | undefined,
  oldRSs: readonly ReplicaSet[],
  newRevision: number,
): DeploymentAction[] {
  const all = newRS ? [newRS, ...oldRSs] : [...oldRSs];
  const resize = (d: Deployment, rs: ReplicaSet, replicas: number): DeploymentAction[] =>
    resizeTo(d, rs, replicas, rs === newRS ? newRevision : undefined);
  const active = all.filter((rs) => replicasOf(rs) > 0);
  const want = replicasOf(d);
  if (active.length <= 1) {
    const target = active[0] ?? newRS ?? oldestFirst(oldRSs).at(-1);
    return target ? resize(d, target, want) : [];
  }
  if (
    newRS &&
    replicasOf(newRS) === want &&
    Number(newRS.metadata?.annotations?.[DESIRED_REPLICAS_ANNOTATION]) === want &&
    (newRS.status?.availableReplicas ?? 0) === want
  ) {
    return oldRSs.filter((rs) => replicasOf(rs) > 0).flatMap((rs) => resize(d, rs, 0));
  }
  // Proportional scaling (kube's GetProportion): each active ReplicaSet grows or shrinks as its share of the
  // max-replicas it was sized for; what rounding leaves goes to the largest.
  const allowed = want > 0 ? want + maxSurge(d) : 0;
  const toAdd = allowed - specReplicas(active);
  const created = (rs: ReplicaSet): number => Date.parse(rs.metadata?.creationTimestamp ?? '') || 0;
  const sorted = [...active].sort(
    (a, b) => replicasOf(b) - replicasOf(a) || (toAdd > 0 ? created(b) - created(a) : created(a) - created(b)),
  );
  const sizes = new Map<ReplicaSet, number>();
  let added = 0;
  for (const rs of sorted) {
    let part = 0;
    if (toAdd !== 0) {
      const annotated = Number(rs.metadata?.annotations?.[MAX_REPLICAS_ANNOTATION] ?? d.status?.replicas ?? 0);
      const fraction =
        want === 0
          ? -replicasOf(rs)
          : annotated > 0
            ? Math.round((replicasOf(rs) * allowed) / annotated) - replicasOf(rs)
            : 0;
      part = toAdd > 0 ? Math.min(fraction, toAdd - added) : Math.max(fraction, toAdd - added);
    }
    sizes.set(rs, replicasOf(rs) + part);
    added += part;
  }
  const first = sorted[0];
  if (first && toAdd !== 0) sizes.set(first, Math.max(0, (sizes.get(first) ?? 0) + toAdd - added));
  return sorted.flatMap((rs) => resize(d, rs, sizes.get(rs) ?? replicasOf(rs)));
}

/** cleanupDeployment: old ReplicaSets without replicas beyond revisionHistoryLimit, oldest revision first. */
export function historyToDelete(d: Deployment, oldRSs: readonly ReplicaSet[]): ReplicaSet[] {
  const limit = d.spec?.revisionHistoryLimit ?? 10;
  const cleanable = oldRSs.filter(
    (rs) => replicasOf(rs) === 0 && (rs.status?.replicas ?? 0) === 0 && !rs.metadata?.deletionTimestamp,
  );
  const extra = cleanable.length - limit;
  if (extra <= 0) return [];
  return [...cleanable]
    .sort(
      (a, b) =>
        revisionOf(a) - revisionOf(b) ||
        (Date.parse(a.metadata?.creationTimestamp ?? '') || 0) - (Date.parse(b.metadata?.creationTimestamp ?? '') || 0),
    )
    .slice(0, extra);
}

/** The RollingUpdate or Recreate step of a rollout, given the new ReplicaSet (if any). */
function rolloutActions(
  d: Deployment,
  newRS: ReplicaSet | undefined,
  oldRSs: readonly ReplicaSet[],
  podsOf: DeploymentView['podsOf'],
  newRevision: number,
): DeploymentAction[] {
  const resize = resizeTo;
  const all = newRS ? [newRS, ...oldRSs] : [...oldRSs];
  if ((d.spec?.strategy?.type ?? 'RollingUpdate') === 'Recreate') {
    const down = oldRSs.filter((rs) => replicasOf(rs) !== 0).flatMap((rs) => resize(d, rs, 0));
    if (down.length) return down;
    if (oldPodsRunning(newRS, oldRSs, podsOf)) return [];
    if (!newRS) return [{ kind: 'create', rs: newReplicaSetFor(d, replicasOf(d), newRevision) }];
    return resize(d, newRS, replicasOf(d), newRevision);
  }
  if (!newRS)
    return [{ kind: 'create', rs: newReplicaSetFor(d, newReplicaSetReplicas(d, all, undefined), newRevision) }];
  // reconcileNewReplicaSet: scale the new ReplicaSet up (or down to the replicas) first.
  const want = replicasOf(newRS) > replicasOf(d) ? replicasOf(d) : newReplicaSetReplicas(d, all, newRS);
  const up = resize(d, newRS, want, newRevision);
  if (want !== replicasOf(newRS)) return up;
  const downs = scaleDownOldReplicaSets(d, newRS, oldRSs);
  const oldActions = oldRSs.flatMap((rs) =>
    downs.has(rs.metadata?.name ?? '') ? resize(d, rs, downs.get(rs.metadata?.name ?? '')!) : [],
  );
  return [...up, ...oldActions];
}

/** isScalingEvent: an active ReplicaSet was sized for another replica count than the Deployment's. */
function isScalingEvent(d: Deployment, all: readonly ReplicaSet[]): boolean {
  return all.some(
    (rs) =>
      replicasOf(rs) > 0 &&
      rs.metadata?.annotations?.[DESIRED_REPLICAS_ANNOTATION] !== undefined &&
      Number(rs.metadata.annotations[DESIRED_REPLICAS_ANNOTATION]) !== replicasOf(d),
  );
}

/** The ReplicaSets as they will be after `actions` (spec sizes only; statuses are the observed ones). */
function applied(all: readonly ReplicaSet[], actions: readonly DeploymentAction[]): ReplicaSet[] {
  const out = all.map((rs) => {
    const a = actions.find((x) => x.kind === 'update' && x.rs === rs);
    return a && a.kind === 'update' ? { ...rs, spec: { ...rs.spec!, replicas: a.replicas } } : rs;
  });
  for (const a of actions) if (a.kind === 'create') out.push(a.rs);
  return out.filter((rs) => !actions.some((a) => a.kind === 'delete' && a.rs === rs));
}

/** syncDeployment: this sync's actions and the status to write. */
export function planDeployment(v: DeploymentView): DeploymentPlan {
  const { d, nowMs, nowIso } = v;
  const newRS = findNewReplicaSet(d, v.replicaSets);
  const oldRSs = v.replicaSets.filter((rs) => rs !== newRS);
  const newRevision = maxRevision(oldRSs) + 1;
  let actions: DeploymentAction[] = [];
  if (!d.metadata?.deletionTimestamp) {
    if (d.spec?.paused || isScalingEvent(d, v.replicaSets)) {
      actions = scaleActions(d, newRS, oldRSs, newRevision);
    } else {
      actions = rolloutActions(d, newRS, oldRSs, v.podsOf, newRevision);
    }
  }
  const after = applied(v.replicaSets, actions);
  const created = actions.find((a) => a.kind === 'create');
  const nextNew = created?.kind === 'create' ? created.rs : newRS;
  const status = calculateStatus(d, after, nextNew, nowIso);
  let requeueAfterMs: number | undefined;
  if (d.spec?.paused) {
    if (condition(status, 'Progressing')?.reason !== 'DeploymentPaused')
      setCondition(
        status,
        { type: 'Progressing', status: 'Unknown', reason: 'DeploymentPaused', message: 'Deployment is paused' },
        nowIso,
      );
  } else {
    if (condition(status, 'Progressing')?.reason === 'DeploymentPaused')
      setCondition(
        status,
        { type: 'Progressing', status: 'Unknown', reason: 'DeploymentResumed', message: 'Deployment is resumed' },
        nowIso,
      );
    if (created)
      setCondition(
        status,
        {
          type: 'Progressing',
          status: 'True',
          reason: 'NewReplicaSetCreated',
          message: `Created new replica set "${nextNew?.metadata?.name ?? ''}"`,
        },
        nowIso,
      );
    else if (newRS && !condition(status, 'Progressing'))
      setCondition(
        status,
        {
          type: 'Progressing',
          status: 'True',
          reason: 'FoundNewReplicaSet',
          message: `Found new replica set "${newRS.metadata?.name ?? ''}"`,
        },
        nowIso,
      );
    else requeueAfterMs = rolloutStatus(d, status, nextNew, nowMs, nowIso);
  }
  // History goes once the rollout is complete (and while paused, as dc.sync does).
  if (actions.length === 0 && (d.spec?.paused || complete(d, status))) {
    for (const rs of historyToDelete(d, oldRSs)) actions.push({ kind: 'delete', rs });
  }
  // The Deployment's revision is its new ReplicaSet's, bumped past the old ones (a rollback's template gets a new number).
  const revision = nextNew ? String(Math.max(revisionOf(nextNew), newRevision)) : undefined;
  const plan: DeploymentPlan = { actions, status, ...(requeueAfterMs !== undefined ? { requeueAfterMs } : {}) };
  return revision !== undefined && d.metadata?.annotations?.[REVISION_ANNOTATION] !== revision
    ? { ...plan, revision }
    : plan;
}
