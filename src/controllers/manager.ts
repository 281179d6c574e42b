import { COMPONENTS, componentUserAgent } from '../kube/version.js';
import { type RestClient, runLeaderElected, type LeaderElectionConfig } from '../client/index.js';
import { childAbortController } from '../util/abort.js';
import { toStowageError } from '../util/errors.js';
import { newLogger } from '../util/log.js';
import type { MetricsRegistry } from '../util/metrics.js';
import { runAttachDetachController } from './attachdetach/run.js';
import { runEphemeralVolumeController } from './ephemeral/run.js';
import { runGarbageCollector } from './garbagecollector/run.js';
import { newControllerInformers } from './informers.js';
import { runDisruptionController } from './disruption/run.js';
import { runNamespaceController } from './namespace/run.js';
import { runNodeLifecycleController } from './nodelifecycle/run.js';
import type { EvictionLimits } from './nodelifecycle/zones.js';
import { runPvController } from './persistentvolume/run.js';
import { runProtectionControllers } from './protection/run.js';
import { runScheduler } from './scheduler/run.js';
import { runReplicaSetController } from './replicaset/run.js';
import { runDeploymentController } from './deployment/run.js';
import { runEndpointsController } from './endpoints/run.js';
import { runStatefulSetController } from './statefulset/run.js';
import { runDaemonSetController } from './daemon/run.js';
import { runJobController } from './job/run.js';
import { runTtlAfterFinishedController } from './ttlafterfinished/run.js';

const log = newLogger('controllers');

export interface ControllersOptions {
  readonly client: RestClient;
  readonly signal: AbortSignal;
  readonly metrics?: MetricsRegistry;
  readonly workers?: number;
  /** Run the volume-aware scheduler (default true). */
  readonly scheduler?: boolean;
  /** Run the attach/detach controller (default true). */
  readonly attachDetach?: boolean;
  /** --node-monitor-grace-period / --node-monitor-period of the node lifecycle controller (default kube's 40 s / 5 s). */
  readonly nodeMonitorGracePeriodMs?: number;
  readonly nodeMonitorPeriodMs?: number;
  /** --node-eviction-rate and the other zone eviction limits of the node lifecycle controller (default kube's). */
  readonly evictionLimits?: EvictionLimits;
}

/**
 * Runs every controller until `signal` aborts: kube-controller-manager's PV binder, pvc/pv
 * protection, attach/detach, namespace, garbage-collector, ephemeral-volume, disruption, replicaset,
 * deployment, endpoints, statefulset, daemonset, job and ttl-after-finished and node lifecycle controllers,
 * and kube-scheduler's volume-aware placement. A controller that fails to start (its caches never synced) stops the others; the
 * first failure is rethrown once all have stopped.
 */
export async function runControllers(o: ControllersOptions): Promise<void> {
  const informers = newControllerInformers(o.client);
  // One scope for the informers and the controllers: their abort listeners go on it, and the
  // caller's signal (a process-wide one) gets a single listener.
  const stop = childAbortController(o.signal);
  const { client, metrics } = o;
  const signal = stop.signal;
  // kube-scheduler is a process of its own in Kubernetes: its writes have their own field manager.
  const schedulerClient =
    o.scheduler === false ? undefined : client.withUserAgent(componentUserAgent(COMPONENTS.scheduler));
  const results = await Promise.allSettled(
    [
      runPvController({ client, signal, metrics, workers: o.workers, informers }),
      runProtectionControllers({ client, signal, metrics, informers }),
      runNamespaceController({ client, signal, metrics, informers }),
      runGarbageCollector({ client, signal, metrics, informers }),
      runEphemeralVolumeController({ client, signal, metrics, informers }),
      runDisruptionController({ client, signal, metrics, informers }),
      runReplicaSetController({ client, signal, metrics, informers }),
      runDeploymentController({ client, signal, metrics, informers }),
      runEndpointsController({ client, signal, metrics, informers }),
      runStatefulSetController({ client, signal, metrics, informers }),
      runDaemonSetController({ client, signal, metrics, informers }),
      runJobController({ client, signal, metrics, informers }),
      runTtlAfterFinishedController({ client, signal, metrics, informers }),
      runNodeLifecycleController({
        client,
        signal,
        metrics,
        informers,
        gracePeriodMs: o.nodeMonitorGracePeriodMs,
        monitorPeriodMs: o.nodeMonitorPeriodMs,
        evictionLimits: o.evictionLimits,
      }),
      o.attachDetach === false ? undefined : runAttachDetachController({ client, signal, metrics, informers }),
      schedulerClient && runScheduler({ client: schedulerClient, signal, metrics, informers }),
    ].map((run) =>
      run?.catch((e: unknown) => {
        log.error('controller failed; stopping the others', { error: toStowageError(e).message });
        stop.abort();
        throw e;
      }),
    ),
  );
  schedulerClient?.close();
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
}

/** kube-controller-manager's --leader-elect-resource-name is its own name; ours is ours. */
export const CONTROLLERS_LEASE = 'stowage-controllers';

/**
 * Runs the controllers only while holding the Lease (default `stowage-controllers` in kube-system),
 * so that several `stowage controllers` processes can run with one active. Every write passes the
 * lease gate; losing the lease rejects with LeaderElectionLostError (the process exits and its
 * supervisor restarts it, as kube-controller-manager does).
 */
export async function runControllersWithLeaderElection(
  o: ControllersOptions & { election?: LeaderElectionConfig },
): Promise<void> {
  await runLeaderElected({
    client: o.client,
    config: { ...o.election, leaseName: o.election?.leaseName ?? CONTROLLERS_LEASE },
    signal: o.signal,
    log,
    work: ({ client, signal }) => runControllers({ ...o, client, signal }),
  });
}
