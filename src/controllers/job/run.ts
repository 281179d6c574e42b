/**
 * The Job controller on the shared runtime: a Job is reconciled when it changes and when a pod it
 * controls changes. A pass writes the status first when it records newly finished pods (so a pod
 * is counted before its finalizer goes), then executes the decision's pod writes.
 */
import type { Job } from 'kubernetes-types/batch/v1.js';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { newController, newEventRecorder, watch, type RestClient, type ReconcileResult } from '../../client/index.js';
import { splitNamespacedKey } from '../../kube/keys.js';
import { JOB_TRACKING_FINALIZER, newControllerRef } from '../../kube/workloads.js';
import { AlreadyExistsError, ConflictError, NotFoundError, assertNever, toStowageError } from '../../util/errors.js';
import { newLogger } from '../../util/log.js';
import { metaTime } from '../../util/metatime.js';
import type { MetricsRegistry } from '../../util/metrics.js';
import {
  CONTROLLER_UID_INDEX,
  newControllerInformers,
  queueOwnKey,
  type ControllerInformers,
  mapToKeys,
} from '../informers.js';
import { newExpectations } from '../expectations.js';
import { claimAndPatch, controllerKey } from '../refmanager.js';
import { DEFAULT_JOB_BACKOFF, decideJob, newJobPod, type JobAction, type JobBackoff } from './decide.js';
import { sortedJson } from '../../util/sortedjson.js';

const log = newLogger('job');

export interface JobControllerOptions {
  readonly client: RestClient;
  readonly signal: AbortSignal;
  readonly informers?: ControllerInformers;
  readonly metrics?: MetricsRegistry;
  readonly workers?: number;
  /** Pod re-creation backoff after failures (default Kubernetes' 10 s doubling to 6 min). */
  readonly backoff?: JobBackoff;
}

/** Queue keys of tracked pods without a Job, as opposed to Jobs' `namespace/name`. */
const ORPHAN_POD = 'orphan-pod:';
const hasTrackingFinalizer = (p: Pod): boolean => (p.metadata?.finalizers ?? []).includes(JOB_TRACKING_FINALIZER);

/** Runs the Job controller until `signal` aborts. */
export async function runJobController(o: JobControllerOptions): Promise<void> {
  const { client } = o;
  const { jobs, pods } = o.informers ?? newControllerInformers(client);
  const jobsApi = client.resource('Job');
  const podsApi = client.resource('Pod');
  const recorder = newEventRecorder({ client, component: 'job-controller' });
  const expectations = newExpectations();

  const releasePods = async (list: readonly Pod[], ns: string): Promise<void> => {
    for (const p of list) {
      try {
        await podsApi.patch(
          p.metadata?.name ?? '',
          'strategic',
          { metadata: { '$deleteFromPrimitiveList/finalizers': [JOB_TRACKING_FINALIZER], uid: p.metadata?.uid } },
          { namespace: ns },
        );
      } catch (e) {
        if (!(e instanceof NotFoundError) && !(e instanceof ConflictError)) throw e;
      }
    }
  };

  const execute = async (
    job: Job,
    a: Exclude<JobAction, { kind: 'event' }>,
    ns: string,
    key: string,
  ): Promise<void> => {
    switch (a.kind) {
      case 'createPods':
        for (let i = 0; i < a.count; i++) {
          try {
            const p = await podsApi.create(newJobPod(job, a.indexes?.[i], a.failures?.[i]), { namespace: ns });
            expectations.expect(key, { created: [p.metadata?.name ?? ''] }, Date.now());
            recorder.event(job, 'Normal', 'SuccessfulCreate', `Created pod: ${p.metadata?.name ?? ''}`);
          } catch (e) {
            if (e instanceof AlreadyExistsError) continue;
            recorder.event(job, 'Warning', 'FailedCreate', `Error creating: ${toStowageError(e).message}`);
            throw e;
          }
        }
        return;
      case 'deletePods':
        for (const p of a.pods) {
          try {
            await podsApi.delete(p.metadata?.name ?? '', { namespace: ns, preconditions: { uid: p.metadata?.uid } });
            expectations.expect(key, { deleted: [p.metadata?.uid ?? ''] }, Date.now());
            recorder.event(job, 'Normal', 'SuccessfulDelete', `Deleted pod: ${p.metadata?.name ?? ''}`);
          } catch (e) {
            if (!(e instanceof NotFoundError)) throw e;
          }
        }
        return;
      case 'removeFinalizers':
        return releasePods(a.pods, ns);
      default:
        assertNever(a);
    }
  };

  const controller = newController<string>({
    name: 'job',
    workers: o.workers ?? 2,
    metrics: o.metrics,
    log,
    sources: [
      watch(jobs, queueOwnKey),
      watch(
        pods,
        mapToKeys(
          (p: Pod) =>
            controllerKey(p, 'Job') ??
            (hasTrackingFinalizer(p)
              ? `${ORPHAN_POD}${p.metadata?.namespace ?? ''}/${p.metadata?.name ?? ''}`
              : undefined),
        ),
      ),
    ],
    reconcile: async (key): Promise<ReconcileResult | void> => {
      if (key.startsWith(ORPHAN_POD)) {
        // A tracked pod no Job controls any more (orphaned, or its Job gone): nothing will count it.
        const [ns, name] = splitNamespacedKey(key.slice(ORPHAN_POD.length));
        const p = pods.lister.get(ns, name);
        if (p && hasTrackingFinalizer(p) && !controllerKey(p, 'Job')) await releasePods([p], ns);
        return;
      }
      const [ns, name] = splitNamespacedKey(key);
      const job = jobs.lister.get(ns, name);
      if (!job || job.metadata?.deletionTimestamp) {
        // The Job is going: its pods must not be held by the tracking finalizer (cleanupPodFinalizers).
        expectations.forget(key);
        const held = pods.lister
          .list(ns)
          .filter(
            (p) =>
              hasTrackingFinalizer(p) &&
              p.metadata?.ownerReferences?.some(
                (r) =>
                  r.controller === true && r.kind === 'Job' && r.name === name && (!job || r.uid === job.metadata?.uid),
              ),
          );
        await releasePods(held, ns);
        return;
      }
      const now = Date.now();
      // The Job's pods, and orphans its selector matches (adopted, as upstream's ClaimPods).
      const candidates = [
        ...new Set([
          ...pods.byIndex(CONTROLLER_UID_INDEX, job.metadata?.uid ?? ''),
          ...pods.lister.list(ns).filter((p) => !p.metadata?.ownerReferences?.some((r) => r.controller === true)),
        ]),
      ];
      const owned = await claimAndPatch({
        owner: job,
        ref: newControllerRef(job, 'batch/v1', 'Job'),
        candidates,
        patch: (n, body) => podsApi.patch(n, 'strategic', body, { namespace: ns }),
      });
      // Pods just created or deleted not in the cache yet: their events bring the Job back.
      if (!expectations.satisfied(key, owned, now)) return { requeueAfterMs: 1000 };
      const decision = decideJob({
        job,
        pods: owned,
        now,
        nowIso: metaTime(now),
        backoff: o.backoff ?? DEFAULT_JOB_BACKOFF,
      });
      const statusChanged = sortedJson(decision.status) !== sortedJson(job.status ?? {});
      const writeStatus = async (): Promise<boolean> => {
        try {
          await jobsApi.updateStatus({ ...job, status: decision.status }, { namespace: ns });
          return true;
        } catch (e) {
          if (e instanceof NotFoundError || e instanceof ConflictError) return false; // its update event brings it back
          throw e;
        }
      };
      // Newly finished pods are recorded in the status before anything else (their finalizers go on a later pass).
      const recordsPods =
        sortedJson(decision.status.uncountedTerminatedPods ?? {}) !==
        sortedJson(job.status?.uncountedTerminatedPods ?? {});
      if (statusChanged && recordsPods && !(await writeStatus())) return;
      for (const a of decision.actions) {
        if (a.kind === 'event') recorder.event(job, a.type, a.reason, a.message);
        else await execute(job, a, ns, key);
      }
      if (statusChanged && !recordsPods) await writeStatus();
      if (decision.requeueAfterMs !== undefined) return { requeueAfterMs: decision.requeueAfterMs };
    },
  });
  try {
    await controller.run(o.signal);
  } finally {
    await recorder.close();
  }
}
