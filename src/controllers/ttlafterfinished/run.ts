/**
 * The TTL-after-finished controller on the shared runtime: finished Jobs with
 * ttlSecondsAfterFinished are deleted when it expires, with background propagation so the
 * garbage collector deletes their pods. The deletion is conditional on the Job not having changed
 * since it was read (a TTL raised meanwhile keeps it), as upstream.
 */
import type { Job } from 'kubernetes-types/batch/v1.js';
import { newController, watch, type RestClient } from '../../client/index.js';
import { metaNamespaceKey, splitNamespacedKey } from '../../kube/keys.js';
import { ConflictError, NotFoundError, assertNever } from '../../util/errors.js';
import { newLogger } from '../../util/log.js';
import type { MetricsRegistry } from '../../util/metrics.js';
import { newControllerInformers, type ControllerInformers } from '../informers.js';
import { decideTtl } from './decide.js';

const log = newLogger('ttl-after-finished');

export interface TtlControllerOptions {
  readonly client: RestClient;
  readonly signal: AbortSignal;
  readonly informers?: ControllerInformers;
  readonly metrics?: MetricsRegistry;
}

/** Runs the TTL-after-finished controller until `signal` aborts. */
export async function runTtlAfterFinishedController(o: TtlControllerOptions): Promise<void> {
  const { jobs } = o.informers ?? newControllerInformers(o.client);
  const jobsApi = o.client.resource('Job');
  const controller = newController<string>({
    name: 'ttl_after_finished',
    metrics: o.metrics,
    log,
    sources: [
      watch(jobs, (q) => {
        const onJob = (j: Job): void => {
          if (j.spec?.ttlSecondsAfterFinished !== undefined && j.spec.ttlSecondsAfterFinished !== null)
            q.add(metaNamespaceKey(j));
        };
        return { onAdd: onJob, onUpdate: (_, j) => onJob(j) };
      }),
    ],
    reconcile: async (key) => {
      const [ns, name] = splitNamespacedKey(key);
      const job = jobs.lister.get(ns, name);
      if (!job) return;
      const d = decideTtl(job, Date.now());
      switch (d.kind) {
        case 'none':
          return;
        case 'wait':
          return { requeueAfterMs: d.ms };
        case 'delete':
          try {
            // Foreground, as upstream: the Job stays (deleting) until its pods are gone. The resourceVersion
            // precondition stands in for upstream's fresh GET: a Job whose TTL changed since read is not deleted.
            await jobsApi.delete(name, {
              namespace: ns,
              propagationPolicy: 'Foreground',
              preconditions: { uid: job.metadata?.uid, resourceVersion: job.metadata?.resourceVersion },
            });
            log.info('deleted a finished job whose TTL expired', { job: key });
          } catch (e) {
            // Gone, or changed since read (its update event brings it back with the new TTL).
            if (!(e instanceof NotFoundError) && !(e instanceof ConflictError)) throw e;
          }
          return;
        default:
          return assertNever(d);
      }
    },
  });
  await controller.run(o.signal);
}
