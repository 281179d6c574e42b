/**
 * The Job controller's decision (pkg/controller/job syncJob, v1.30, NonIndexed): pods carry the
 * `batch.kubernetes.io/job-tracking` finalizer until the Job has counted them. A finished pod is
 * first recorded in status.uncountedTerminatedPods, then its finalizer is removed, then it moves
 * into succeeded/failed — so no pod is counted twice or lost across restarts. The Job completes
 * when `completions` pods succeeded (a work queue: when one did and none is active), and fails
 * when more than backoffLimit pods failed (OnFailure: container restarts count) or it ran past
 * activeDeadlineSeconds; the finished condition is written once every pod is counted. Pure.
 */
import type { Job, JobCondition, JobStatus } from 'kubernetes-types/batch/v1.js';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { isPodActive, isPodReady, JOB_TRACKING_FINALIZER, newControllerRef } from '../../kube/workloads.js';
import { failureVerdict } from './failurepolicy.js';
import {
  completionIndex,
  formatIndexes,
  indexesToCreate,
  indexFailureCount,
  JOB_COMPLETION_INDEX,
  JOB_INDEX_FAILURE_COUNT,
  parseIndexes,
} from './indexed.js';

export interface JobBackoff {
  /** Delay before re-creating a pod after the first failure; doubled per failure (Kubernetes: 10 s). */
  readonly initialMs: number;
  /** Kubernetes: 6 min. */
  readonly maxMs: number;
}

export const DEFAULT_JOB_BACKOFF: JobBackoff = { initialMs: 10_000, maxMs: 360_000 };

export interface JobState {
  readonly job: Job;
  /** The pods the Job controls. */
  readonly pods: readonly Pod[];
  readonly now: number;
  readonly nowIso: string;
  readonly backoff: JobBackoff;
}

export type JobAction =
  /** `indexes` for an Indexed Job: one pod per index. */
  | {
      readonly kind: 'createPods';
      readonly count: number;
      readonly indexes?: readonly number[];
      readonly failures?: readonly number[];
    }
  | { readonly kind: 'deletePods'; readonly pods: readonly Pod[] }
  | { readonly kind: 'removeFinalizers'; readonly pods: readonly Pod[] }
  | { readonly kind: 'event'; readonly type: 'Normal' | 'Warning'; readonly reason: string; readonly message: string };

export interface JobDecision {
  /** In order: status first when it records newly finished pods (before their finalizers go). */
  readonly actions: readonly JobAction[];
  readonly status: JobStatus;
  readonly requeueAfterMs?: number;
}

export function hasCondition(job: Job, type: string): boolean {
  return (job.status?.conditions ?? []).some((c) => c.type === type && c.status === 'True');
}

/** A Job is finished once it has a Complete or Failed condition. */
export function isJobFinished(job: Job): boolean {
  return hasCondition(job, 'Complete') || hasCondition(job, 'Failed');
}

const hasFinalizer = (p: Pod): boolean => (p.metadata?.finalizers ?? []).includes(JOB_TRACKING_FINALIZER);
const isSucceeded = (p: Pod): boolean => p.status?.phase === 'Succeeded';

/** isPodFailed: Failed, or (podReplacementPolicy TerminatingOrFailed) deleted before it succeeded. */
function isFailed(job: Job, p: Pod): boolean {
  if (p.status?.phase === 'Failed') return true;
  // With a podFailurePolicy only the Failed phase counts (a deleted pod is marked Failed first).
  if (job.spec?.podReplacementPolicy === 'Failed' || job.spec?.podFailurePolicy) return false;
  return !!p.metadata?.deletionTimestamp && p.status?.phase !== 'Succeeded';
}

/** pastBackoffLimitOnFailure: with OnFailure, container restarts of active pods count as failures. */
function pastBackoffLimitOnFailure(job: Job, active: readonly Pod[]): boolean {
  if (job.spec?.template?.spec?.restartPolicy !== 'OnFailure') return false;
  const limit = job.spec?.backoffLimit ?? 6;
  let restarts = 0;
  for (const p of active)
    for (const s of [...(p.status?.initContainerStatuses ?? []), ...(p.status?.containerStatuses ?? [])])
      restarts += s.restartCount ?? 0;
  return limit === 0 ? restarts > 0 : restarts >= limit;
}

function finishTime(p: Pod): number {
  let t = 0;
  for (const s of p.status?.containerStatuses ?? [])
    t = Math.max(t, Date.parse(s.state?.terminated?.finishedAt ?? '') || 0);
  if (t === 0) t = Date.parse(p.metadata?.deletionTimestamp ?? '') || 0;
  for (const c of p.status?.conditions ?? []) t = Math.max(t, Date.parse(c.lastTransitionTime ?? '') || 0);
  return t || Date.parse(p.metadata?.creationTimestamp ?? '') || 0;
}

function condition(type: string, reason: string, message: string, nowIso: string): JobCondition {
  return {
    type,
    status: 'True',
    lastProbeTime: nowIso,
    lastTransitionTime: nowIso,
    ...(reason ? { reason } : {}),
    ...(message ? { message } : {}),
  };
}

/** Active pods to delete first when there are too many: not yet running, then not ready, then the newest. */
function deletionOrder(a: Pod, b: Pod): number {
  const rank = (p: Pod): number => (!p.spec?.nodeName ? 0 : p.status?.phase === 'Pending' ? 1 : !isPodReady(p) ? 2 : 3);
  return rank(a) - rank(b) || (b.metadata?.creationTimestamp ?? '').localeCompare(a.metadata?.creationTimestamp ?? '');
}

/**
 * Indexed Jobs (`completions` given): the indexes that succeeded, each once; and with
 * backoffLimitPerIndex, the indexes whose pods failed more than that many times (failed for good),
 * with how often each index failed (each pod carries its index's count before it).
 */
function indexAccounting(
  s: JobState,
  completions: number | undefined,
): { completed: Set<number>; failedIndexes: Set<number>; indexFailures: Map<number, number> } {
  const { job } = s;
  const completed = parseIndexes(job.status?.completedIndexes);
  const failedIndexes = parseIndexes(job.status?.failedIndexes);
  const indexFailures = new Map<number, number>();
  if (completions === undefined) return { completed, failedIndexes, indexFailures };
  for (const p of s.pods) {
    const i = completionIndex(p);
    if (isSucceeded(p) && i !== undefined && i < completions) completed.add(i);
  }
  const perIndex = job.spec?.backoffLimitPerIndex;
  if (perIndex !== undefined && perIndex !== null) {
    for (const p of s.pods) {
      const i = completionIndex(p);
      if (i === undefined || i >= completions || !isFailed(job, p) || failureVerdict(job, p).action === 'Ignore')
        continue;
      const n = indexFailureCount(p) + 1;
      indexFailures.set(i, Math.max(indexFailures.get(i) ?? 0, n));
      if (n > perIndex) failedIndexes.add(i);
    }
  }
  return { completed, failedIndexes, indexFailures };
}

/** Indexed: a pod of an index already done or failed, out of range or held twice is surplus. */
function splitByIndex(
  allActive: readonly Pod[],
  completions: number,
  completed: ReadonlySet<number>,
  failedIndexes: ReadonlySet<number>,
): { active: Pod[]; surplus: Pod[] } {
  const active: Pod[] = [];
  const surplus: Pod[] = [];
  const held = new Set<number>();
  for (const p of allActive) {
    const i = completionIndex(p);
    if (i === undefined || i >= completions || completed.has(i) || failedIndexes.has(i) || held.has(i)) surplus.push(p);
    else {
      held.add(i);
      active.push(p);
    }
  }
  return { active, surplus };
}

/** The Failed or Complete condition the Job has earned now, if any (in kube's order of checks). */
function finishedConditionOf(c: {
  job: Job;
  failureTarget: JobCondition | undefined;
  start: number;
  now: number;
  nowIso: string;
  indexed: boolean;
  completed: ReadonlySet<number>;
  failedIndexes: ReadonlySet<number>;
  totalFailed: number;
  totalSucceeded: number;
  active: readonly Pod[];
}): JobCondition | undefined {
  const { job, failureTarget, start, nowIso, indexed, completed, failedIndexes, totalFailed, totalSucceeded, active } =
    c;
  const completions = job.spec?.completions;
  const deadline = job.spec?.activeDeadlineSeconds;
  const limit = job.spec?.backoffLimit ?? 6;
  if (failureTarget) {
    return condition('Failed', failureTarget.reason ?? 'PodFailurePolicy', failureTarget.message ?? '', nowIso);
  } else if (deadline !== undefined && deadline !== null && !Number.isNaN(start) && c.now >= start + deadline * 1000) {
    return condition('Failed', 'DeadlineExceeded', 'Job was active longer than specified deadline', nowIso);
  } else if (typeof job.spec?.maxFailedIndexes === 'number' && failedIndexes.size > job.spec.maxFailedIndexes) {
    return condition(
      'Failed',
      'MaxFailedIndexesExceeded',
      'Job has exceeded the specified maximal number of failed indexes',
      nowIso,
    );
  } else if (
    indexed &&
    typeof completions === 'number' &&
    failedIndexes.size > 0 &&
    completed.size + failedIndexes.size >= completions
  ) {
    return condition('Failed', 'FailedIndexes', 'Job has failed indexes', nowIso);
  } else if (totalFailed > limit || pastBackoffLimitOnFailure(job, active)) {
    return condition('Failed', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit', nowIso);
  } else if (
    completions !== undefined && completions !== null
      ? totalSucceeded >= completions
      : totalSucceeded > 0 && active.length === 0
  ) {
    return condition('Complete', '', '', nowIso);
  }
  return undefined;
}

/**
 * Adds the pods that finished since the last status (still with their finalizer, not yet listed)
 * to `uncounted`; returns the FailureTarget condition (kept, or set by a FailJob rule) and the
 * failed pods the podFailurePolicy ignores.
 */
function recordNewlyFinished(
  s: JobState,
  storedUids: ReadonlySet<string>,
  uncounted: { succeeded: string[]; failed: string[] },
): { failureTarget: JobCondition | undefined; ignored: Pod[] } {
  const { job, nowIso } = s;
  let failureTarget = (job.status?.conditions ?? []).find((c) => c.type === 'FailureTarget' && c.status === 'True');
  const ignored: Pod[] = [];
  for (const p of s.pods) {
    const uid = p.metadata?.uid ?? '';
    if (!hasFinalizer(p) || storedUids.has(uid)) continue;
    if (isSucceeded(p)) uncounted.succeeded.push(uid);
    else if (isFailed(job, p)) {
      const verdict = failureVerdict(job, p);
      if (verdict.action === 'Ignore') {
        ignored.push(p);
        continue;
      }
      if (verdict.action === 'FailJob' && !failureTarget)
        failureTarget = condition('FailureTarget', 'PodFailurePolicy', verdict.message, nowIso);
      uncounted.failed.push(uid);
    }
  }
  return { failureTarget, ignored };
}

/** What to do for the Job now (see the module comment). */
export function decideJob(s: JobState): JobDecision {
  const { job, nowIso } = s;
  const prev = job.status ?? {};
  const stored = {
    succeeded: [...(prev.uncountedTerminatedPods?.succeeded ?? [])],
    failed: [...(prev.uncountedTerminatedPods?.failed ?? [])],
  };
  const storedUids = new Set([...stored.succeeded, ...stored.failed]);
  const byUid = new Map(s.pods.map((p) => [p.metadata?.uid ?? '', p]));
  const actions: JobAction[] = [];

  // Uncounted pods whose finalizer is gone (or that are gone) move into the counters.
  const counted = (uid: string): boolean => {
    const p = byUid.get(uid);
    return !p || !hasFinalizer(p);
  };
  let succeeded = (prev.succeeded ?? 0) + stored.succeeded.filter(counted).length;
  let failed = (prev.failed ?? 0) + stored.failed.filter(counted).length;
  const uncounted = {
    succeeded: stored.succeeded.filter((u) => !counted(u)),
    failed: stored.failed.filter((u) => !counted(u)),
  };
  // Their finalizers can go now that the status names them.
  const release = s.pods.filter((p) => hasFinalizer(p) && storedUids.has(p.metadata?.uid ?? ''));
  // Newly finished pods are recorded before anything else happens to them; a failure the
  // podFailurePolicy ignores is not counted (its finalizer just goes), one it says fails the Job
  // marks the Job FailureTarget.
  const { failureTarget, ignored } = recordNewlyFinished(s, storedUids, uncounted);
  if (release.length || ignored.length) actions.push({ kind: 'removeFinalizers', pods: [...release, ...ignored] });

  const completions = job.spec?.completions;
  const indexed = job.spec?.completionMode === 'Indexed' && typeof completions === 'number';
  const perIndex = indexed ? job.spec?.backoffLimitPerIndex : undefined;
  const { completed, failedIndexes, indexFailures } = indexAccounting(s, indexed ? completions : undefined);
  const allActive = s.pods.filter(isPodActive);
  const { active, surplus } = indexed
    ? splitByIndex(allActive, completions, completed, failedIndexes)
    : { active: allActive, surplus: [] };
  const terminating = s.pods.filter(
    (p) => !!p.metadata?.deletionTimestamp && p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed',
  );
  const finished = isJobFinished(job);
  const totalSucceeded = indexed ? completed.size : succeeded + uncounted.succeeded.length;
  const totalFailed = failed + uncounted.failed.length;
  const status: JobStatus = {
    ...prev,
    succeeded: indexed ? completed.size : succeeded,
    failed,
    uncountedTerminatedPods: uncounted,
  };
  if (indexed) status.completedIndexes = formatIndexes(completed);
  if (indexed && perIndex !== undefined && perIndex !== null) status.failedIndexes = formatIndexes(failedIndexes);
  if (!status.startTime && !job.spec?.suspend && !finished) status.startTime = nowIso;
  // A suspended Job's clock stops: activeDeadlineSeconds counts again from its resumption.
  if (job.spec?.suspend && !finished) delete status.startTime;
  let requeueAfterMs: number | undefined;

  if (finished) {
    // A finished Job only finishes counting: leftover pods lose their finalizers.
    const leftover = s.pods.filter((p) => hasFinalizer(p) && !storedUids.has(p.metadata?.uid ?? '') && !isPodActive(p));
    return finish(
      actions,
      { ...status, active: active.length, ready: active.filter(isPodReady).length, terminating: terminating.length },
      leftover,
    );
  }

  const start = Date.parse(status.startTime ?? '');
  const deadline = job.spec?.activeDeadlineSeconds;
  const finishedCondition = finishedConditionOf({
    job,
    failureTarget,
    start,
    now: s.now,
    nowIso,
    indexed,
    completed,
    failedIndexes,
    totalFailed,
    totalSucceeded,
    active,
  });
  if (!finishedCondition && deadline !== undefined && deadline !== null && !Number.isNaN(start))
    requeueAfterMs = start + deadline * 1000 - s.now;

  let activeAfter = active.length;
  if (surplus.length) actions.push({ kind: 'deletePods', pods: surplus });
  if (finishedCondition || job.spec?.suspend) {
    if (active.length) actions.push({ kind: 'deletePods', pods: active });
    activeAfter = 0;
  } else {
    const parallelism = job.spec?.parallelism ?? 1;
    const want =
      completions !== undefined && completions !== null
        ? Math.max(0, Math.min(parallelism, completions - totalSucceeded - failedIndexes.size))
        : totalSucceeded > 0
          ? active.length // a work queue with a success leaves what runs running
          : parallelism;
    const replacing = job.spec?.podReplacementPolicy === 'Failed' ? 0 : terminating.length;
    if (active.length > want) {
      actions.push({ kind: 'deletePods', pods: [...active].sort(deletionOrder).slice(0, active.length - want) });
      activeAfter = want;
    } else if (active.length + replacing < want) {
      const wait = creationDelay(s, totalFailed);
      if (wait > 0) requeueAfterMs = requeueAfterMs === undefined ? wait : Math.min(requeueAfterMs, wait);
      else {
        const count = want - active.length - replacing;
        if (indexed) {
          const taken = new Set(
            [...active, ...(replacing ? terminating : [])]
              .map(completionIndex)
              .filter((i): i is number => i !== undefined),
          );
          const indexes = indexesToCreate(completions, new Set([...completed, ...failedIndexes]), taken, count);
          if (indexes.length)
            actions.push({
              kind: 'createPods',
              count: indexes.length,
              indexes,
              failures: indexes.map((i) => indexFailures.get(i) ?? 0),
            });
        } else actions.push({ kind: 'createPods', count });
        activeAfter = want - replacing;
      }
    }
  }

  status.active = activeAfter;
  status.ready = active.filter(isPodReady).length;
  status.terminating = terminating.length;
  status.conditions = suspendConditions(job, prev.conditions ?? [], nowIso, actions);
  if (failureTarget && !status.conditions.some((c) => c.type === 'FailureTarget'))
    status.conditions.push(failureTarget);
  // The finished condition waits until no pod is active and every finished one is counted (flushUncountedAndRemoveFinalizers).
  if (
    finishedCondition &&
    allActive.length === 0 &&
    uncounted.succeeded.length === 0 &&
    uncounted.failed.length === 0
  ) {
    status.conditions = [...status.conditions.filter((c) => c.type !== finishedCondition.type), finishedCondition];
    if (finishedCondition.type === 'Complete') {
      status.completionTime = nowIso;
      actions.push({ kind: 'event', type: 'Normal', reason: 'Completed', message: 'Job completed' });
    } else
      actions.push({
        kind: 'event',
        type: 'Warning',
        reason: finishedCondition.reason ?? 'Failed',
        message: finishedCondition.message ?? '',
      });
  }
  if (status.conditions.length === 0) delete status.conditions;
  return {
    actions,
    status: omitEmpty(status),
    ...(requeueAfterMs !== undefined ? { requeueAfterMs: Math.max(1, requeueAfterMs) } : {}),
  };
}

function finish(actions: JobAction[], status: JobStatus, leftover: readonly Pod[]): JobDecision {
  if (leftover.length) {
    // Counted as they are recorded: the next pass removes their finalizers.
    const u = status.uncountedTerminatedPods ?? {};
    status.uncountedTerminatedPods = {
      succeeded: [...(u.succeeded ?? []), ...leftover.filter(isSucceeded).map((p) => p.metadata?.uid ?? '')],
      failed: [...(u.failed ?? []), ...leftover.filter((p) => !isSucceeded(p)).map((p) => p.metadata?.uid ?? '')],
    };
  }
  return { actions, status: omitEmpty(status) };
}

/** The status as Kubernetes serializes it: zero counters and empty uid lists are omitted (`omitempty`). */
function omitEmpty(status: JobStatus): JobStatus {
  const out: JobStatus = { ...status };
  for (const k of ['active', 'succeeded', 'failed'] as const) if (!out[k]) delete out[k];
  const u = out.uncountedTerminatedPods ?? {};
  out.uncountedTerminatedPods = {
    ...(u.succeeded?.length ? { succeeded: u.succeeded } : {}),
    ...(u.failed?.length ? { failed: u.failed } : {}),
  };
  return out;
}

/** The pod-creation backoff after failures: initialMs doubled per failure, from the last failure. */
function creationDelay(s: JobState, failures: number): number {
  if (failures === 0) return 0;
  const failedPods = s.pods.filter((p) => isFailed(s.job, p));
  if (failedPods.length === 0) return 0;
  const last = Math.max(...failedPods.map(finishTime));
  const delay = Math.min(s.backoff.maxMs, s.backoff.initialMs * 2 ** Math.min(failures - 1, 30));
  return Math.max(0, last + delay - s.now);
}

/** The Suspended condition: True while spec.suspend, False (JobResumed) once resumed. */
function suspendConditions(
  job: Job,
  conds: readonly JobCondition[],
  nowIso: string,
  actions: JobAction[],
): JobCondition[] {
  const suspended = conds.find((c) => c.type === 'Suspended');
  if (job.spec?.suspend && suspended?.status !== 'True') {
    actions.push({ kind: 'event', type: 'Normal', reason: 'Suspended', message: 'Job suspended' });
    return [
      ...conds.filter((c) => c.type !== 'Suspended'),
      condition('Suspended', 'JobSuspended', 'Job suspended', nowIso),
    ];
  }
  if (!job.spec?.suspend && suspended?.status === 'True') {
    actions.push({ kind: 'event', type: 'Normal', reason: 'Resumed', message: 'Job resumed' });
    return [
      ...conds.filter((c) => c.type !== 'Suspended'),
      { ...condition('Suspended', 'JobResumed', 'Job resumed', nowIso), status: 'False' },
    ];
  }
  return [...conds];
}

/**
 * A pod of the Job: `<job>-<random>` (Indexed: `<job>-<index>-<random>` with its index) from the
 * template, controlled by the Job, held by the tracking finalizer.
 */
export function newJobPod(job: Job, index?: number, indexFailures?: number): Pod {
  const t = job.spec?.template ?? {};
  const pod = newTemplatePod(job, t);
  if (index === undefined) return pod;
  const name = job.metadata?.name ?? '';
  const env = {
    name: 'JOB_COMPLETION_INDEX',
    valueFrom: { fieldRef: { fieldPath: `metadata.annotations['${JOB_COMPLETION_INDEX}']` } },
  };
  const withEnv = <C extends { env?: unknown[] }>(c: C): C => ({ ...c, env: [...(c.env ?? []), env] });
  return {
    ...pod,
    metadata: {
      ...pod.metadata,
      generateName: `${name}-${index}-`,
      labels: { ...pod.metadata?.labels, [JOB_COMPLETION_INDEX]: String(index) },
      annotations: {
        ...pod.metadata?.annotations,
        [JOB_COMPLETION_INDEX]: String(index),
        ...(job.spec?.backoffLimitPerIndex !== undefined && job.spec.backoffLimitPerIndex !== null
          ? { [JOB_INDEX_FAILURE_COUNT]: String(indexFailures ?? 0) }
          : {}),
      },
    },
    spec: {
      ...pod.spec!,
      hostname: pod.spec?.hostname ?? `${name}-${index}`,
      containers: (pod.spec?.containers ?? []).map(withEnv),
      ...(pod.spec?.initContainers ? { initContainers: pod.spec.initContainers.map(withEnv) } : {}),
    },
  };
}

function newTemplatePod(job: Job, t: NonNullable<NonNullable<Job['spec']>['template']>): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: `${job.metadata?.name ?? ''}-`,
      namespace: job.metadata?.namespace,
      labels: { ...(t.metadata?.labels ?? {}) },
      ...(t.metadata?.annotations ? { annotations: { ...t.metadata.annotations } } : {}),
      finalizers: [JOB_TRACKING_FINALIZER],
      ownerReferences: [newControllerRef(job, 'batch/v1', 'Job')],
    },
    spec: structuredClone(t.spec ?? { containers: [] }),
  };
}
