import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { LeaderElector, RestClient, apiLeaseLock } from '../client/index.js';
import { childAbortController } from '../util/abort.js';
import { newLogger } from '../util/log.js';
import type { MetricsRegistry } from '../util/metrics.js';
import { runAttachDetachController } from './attachdetach/run.js';
import { newControllerInformers, runControllerInformers } from './informers.js';
import { runPvController } from './persistentvolume/run.js';
import { runProtectionControllers } from './protection/run.js';
import { runScheduler } from './scheduler/run.js';

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
}

/**
 * Runs every controller until `signal` aborts: kube-controller-manager's PV binder, pvc/pv
 * protection and attach/detach controllers, and kube-scheduler's volume-aware placement.
 */
export async function runControllers(o: ControllersOptions): Promise<void> {
  // One scope for the informers and the controllers: their abort listeners go on it, and the
  // caller's signal (a process-wide one) gets a single listener.
  const { signal } = childAbortController(o.signal);
  const informers = newControllerInformers(o.client);
  const runs = runControllerInformers(informers, signal);
  await Promise.all([
    runPvController({ client: o.client, signal, metrics: o.metrics, workers: o.workers, informers }),
    runProtectionControllers({ client: o.client, signal, informers }),
    o.attachDetach === false ? undefined : runAttachDetachController({ client: o.client, signal, informers }),
    o.scheduler === false ? undefined : runScheduler({ client: o.client, signal, informers }),
  ]);
  await Promise.all(runs);
}

/**
 * Runs the controllers only while holding the `stowage-controllers` Lease in kube-system, so that
 * several `stowage controllers` processes can run with one active. Losing the lease ends the run
 * (the process exits and its supervisor restarts it, as kube-controller-manager does).
 */
export async function runControllersWithLeaderElection(o: ControllersOptions & { identity?: string }): Promise<void> {
  const identity = o.identity ?? `${hostname()}_${randomUUID()}`;
  let ran: Promise<void> | undefined;
  const elector = new LeaderElector({
    lock: apiLeaseLock({ client: o.client, name: 'stowage-controllers', namespace: 'kube-system' }),
    identity,
    onStartedLeading: (signal) => {
      ran = runControllers({ ...o, signal });
      return ran;
    },
    onNewLeader: (id) => log.info('leader is', { identity: id }),
  });
  await elector.run(o.signal);
  await ran;
}
