/**
 * The ReplicaSet controller on the shared runtime: keeps each ReplicaSet's pods at spec.replicas
 * (decide.ts), adopting and releasing pods through their controller reference, creating in slow-start
 * batches and deleting in kube's order, with expectations so a lagging cache never doubles an action.
 */
import type { ReplicaSet } from 'kubernetes-types/apps/v1.js';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { matchesLabels } from '../../kube/selectors.js';
import { newController, newEventRecorder, watch, type RestClient, type ReconcileResult } from '../../client/index.js';
import { metaNamespaceKey, splitNamespacedKey } from '../../kube/keys.js';
import { controllerRefOf, isPodActive, newControllerRef, slowStartBatches } from '../../kube/workloads.js';
import { toStowageError, ignoreNotFound } from '../../util/errors.js';
import { newLogger } from '../../util/log.js';
import type { MetricsRegistry } from '../../util/metrics.js';
import {
  CONTROLLER_UID_INDEX,
  newControllerInformers,
  queueOwnKey,
  type ControllerInformers,
  mapToKeys,
} from '../informers.js';
import { planReplicaSet, podFromTemplate, replicaSetStatus } from './decide.js';
import { patchClaimed, selectorOf } from '../refmanager.js';
import { newExpectations } from '../expectations.js';
import { deleteOwnedPods } from '../podcontrol.js';
import { metaTime } from '../../util/metatime.js';

const log = newLogger('replicaset');

export interface ReplicaSetControllerOptions {
  readonly client: RestClient;
  readonly signal: AbortSignal;
  readonly informers?: ControllerInformers;
  readonly workers?: number;
  readonly metrics?: MetricsRegistry;
}

/** Runs the ReplicaSet controller until `signal` aborts. */
export async function runReplicaSetController(o: ReplicaSetControllerOptions): Promise<void> {
  const { client } = o;
  const { pods, replicaSets } = o.informers ?? newControllerInformers(client);
  const podsApi = client.resource('Pod');
  const rsApi = client.resource('ReplicaSet');
  const recorder = newEventRecorder({ client, component: 'replicaset-controller' });
  const expectations = newExpectations();

  /** The ReplicaSet keys a pod concerns: its controller's, or (an orphan) every ReplicaSet whose selector matches. */
  const ownersOf = (p: Pod): string[] => {
    const ref = controllerRefOf(p);
    const ns = p.metadata?.namespace ?? '';
    if (ref) return ref.kind === 'ReplicaSet' ? [`${ns}/${ref.name}`] : [];
    return replicaSets.lister
      .list(ns)
      .filter((rs) => matchesLabels(selectorOf(rs), p.metadata?.labels))
      .map(metaNamespaceKey);
  };
  const onPod = mapToKeys(ownersOf, { includeOld: true });

  const controller = newController<string>({
    name: 'replicaset',
    workers: o.workers ?? 2,
    metrics: o.metrics,
    log,
    sources: [watch(replicaSets, queueOwnKey), watch(pods, onPod)],
    reconcile: async (key): Promise<ReconcileResult | void> => {
      const [ns, name] = splitNamespacedKey(key);
      const rs = replicaSets.lister.get(ns, name);
      if (!rs) {
        expectations.forget(key);
        return;
      }
      const now = Date.now();
      const nsPods = pods.lister.list(ns);
      const plan = planReplicaSet(rs, nsPods, now, siblingPods(rs));
      await adoptAndRelease(rs, plan.adopt, plan.release);
      let manageError: { reason: string; message: string; now: string } | undefined;
      // Pods just created or deleted not in the cache yet: counting now would act twice; their events bring the ReplicaSet back.
      if (expectations.satisfied(key, nsPods, now)) {
        try {
          if (plan.create > 0) await createPods(rs, key, plan.create);
          if (plan.delete.length > 0)
            await deleteOwnedPods({ owner: rs, key, victims: plan.delete, api: podsApi, recorder, expectations });
        } catch (e) {
          const err = toStowageError(e);
          manageError = {
            reason: plan.create > 0 ? 'FailedCreate' : 'FailedDelete',
            message: err.message,
            now: metaTime(now),
          };
          await writeStatus(rs, replicaSetStatus(rs, activeOwned(rs), now, manageError));
          throw e;
        }
      }
      await writeStatus(rs, plan.status);
      if (plan.requeueAfterMs !== undefined) return { requeueAfterMs: plan.requeueAfterMs };
    },
  });

  /** Pods of the other ReplicaSets of this ReplicaSet's controller (a Deployment's), ranked with its own. */
  const siblingPods = (rs: ReplicaSet): Pod[] => {
    const owner = controllerRefOf(rs)?.uid;
    if (!owner) return [];
    return replicaSets
      .byIndex(CONTROLLER_UID_INDEX, owner)
      .filter((x) => x.metadata?.uid !== rs.metadata?.uid)
      .flatMap((x) => pods.byIndex(CONTROLLER_UID_INDEX, x.metadata?.uid ?? ''));
  };
  const activeOwned = (rs: ReplicaSet): Pod[] =>
    pods.lister
      .list(rs.metadata?.namespace)
      .filter((p) => controllerRefOf(p)?.uid === rs.metadata?.uid && isPodActive(p));

  async function adoptAndRelease(rs: ReplicaSet, adopt: readonly Pod[], release: readonly Pod[]): Promise<void> {
    const ns = rs.metadata?.namespace;
    await patchClaimed(
      { owned: [], adopt: [...adopt], release: [...release] },
      newControllerRef(rs, 'apps/v1', 'ReplicaSet'),
      (name, body) => podsApi.patch(name, 'strategic', body, { namespace: ns }),
    );
  }

  async function createPods(rs: ReplicaSet, key: string, count: number): Promise<void> {
    for (const size of slowStartBatches(count)) {
      const results = await Promise.allSettled(
        Array.from({ length: size }, () => podsApi.create(podFromTemplate(rs), { namespace: rs.metadata?.namespace })),
      );
      const created = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
      expectations.expect(key, { created: created.map((p) => p.metadata?.name ?? '') }, Date.now());
      for (const p of created)
        recorder.event(rs, 'Normal', 'SuccessfulCreate', `Created pod: ${p.metadata?.name ?? ''}`);
      const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed.length) {
        const msg = toStowageError(failed[0]!.reason).message;
        recorder.event(rs, 'Warning', 'FailedCreate', `Error creating: ${msg}`);
        throw failed[0]!.reason;
      }
    }
  }

  async function writeStatus(rs: ReplicaSet, status: ReplicaSet['status']): Promise<void> {
    if (JSON.stringify(status) === JSON.stringify(rs.status ?? {})) return;
    await rsApi.updateStatus({ ...rs, status }, { namespace: rs.metadata?.namespace }).catch(ignoreNotFound);
  }

  try {
    await controller.run(o.signal);
  } finally {
    await recorder.close();
  }
}
