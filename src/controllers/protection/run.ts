/**
 * Runtimes of the pvc-protection and pv-protection controllers: informers enqueue keys, a worker
 * re-reads the object and applies the pure decision from decisions.ts with an update (a conflict
 * requeues). Before removing the pvc-protection finalizer the pods are listed live from the API,
 * as upstream does: a pod not yet in the informer must not let a claim in use go.
 */
import type { PersistentVolume, PersistentVolumeClaim } from 'kubernetes-types/core/v1.js';
import { newController, watch, type RestClient } from '../../client/index.js';
import {
  POD_CLAIM_INDEX,
  newControllerInformers,
  podClaimKeys,
  type ControllerInformers,
  mapToKeys,
} from '../informers.js';
import { newLogger } from '../../util/log.js';
import { NotFoundError, toStowageError } from '../../util/errors.js';
import type { MetricsRegistry } from '../../util/metrics.js';
import {
  PV_PROTECTION_FINALIZER,
  PVC_PROTECTION_FINALIZER,
  applyFinalizerDecision,
  pvProtectionDecision,
  pvcProtectionDecision,
  type PvcProtectionOptions,
} from './decisions.js';
import { splitNamespacedKey } from '../../kube/keys.js';

const log = newLogger('protection');

/**
 * The update, or false when the object is already gone: the informer lags the store, and an
 * object deleted meanwhile needs no finalizer change (kube ignores a claim it cannot find too).
 */
export async function updateUnlessGone(update: () => Promise<unknown>): Promise<boolean> {
  try {
    await update();
    return true;
  } catch (e) {
    if (toStowageError(e) instanceof NotFoundError) return false;
    throw e;
  }
}

export interface ProtectionRunOptions {
  readonly client: RestClient;
  /** Informers shared with other controllers; default: own ones. */
  readonly informers?: ControllerInformers;
  readonly signal: AbortSignal;
  readonly workers?: number;
  readonly pvc?: PvcProtectionOptions;
  readonly metrics?: MetricsRegistry;
}

/** Runs both protection controllers until `signal` aborts. */
export async function runProtectionControllers(o: ProtectionRunOptions): Promise<void> {
  const { client, signal } = o;
  const { pvcs, pvs, pods } = o.informers ?? newControllerInformers(client);
  const pvcApi = client.resource('PersistentVolumeClaim');
  const pvApi = client.resource('PersistentVolume');
  const podApi = client.resource('Pod');
  const workers = o.workers ?? 2;

  const claims = newController<string>({
    name: 'pvcprotection',
    workers,
    metrics: o.metrics,
    log,
    sources: [
      watch(pvcs, (q) => {
        const onClaim = (c: PersistentVolumeClaim): void => {
          const hasF = (c.metadata?.finalizers ?? []).includes(PVC_PROTECTION_FINALIZER);
          if (c.metadata?.deletionTimestamp ? hasF : !hasF) q.add(`${c.metadata?.namespace}/${c.metadata?.name}`);
        };
        return { onAdd: onClaim, onUpdate: (_, c) => onClaim(c) };
      }),
      watch(pods, mapToKeys(podClaimKeys)),
    ],
    reconcile: async (key) => {
      const [ns, name] = splitNamespacedKey(key);
      const claim = pvcs.lister.get(ns, name);
      if (!claim) return;
      let d = pvcProtectionDecision(claim, pods.byIndex(POD_CLAIM_INDEX, key), o.pvc);
      if (d.kind === 'remove') {
        // Confirm with a live list: the informer may not have seen a just-scheduled pod.
        const live = await podApi.list({ namespace: ns });
        d = pvcProtectionDecision(claim, live.items, o.pvc);
      }
      if (d.kind !== 'add' && d.kind !== 'remove') return;
      const next = structuredClone(claim);
      next.metadata!.finalizers = applyFinalizerDecision(claim.metadata?.finalizers, PVC_PROTECTION_FINALIZER, d);
      if (!(await updateUnlessGone(() => pvcApi.update(next, { namespace: ns })))) return;
      log.debug(`${d.kind === 'add' ? 'added' : 'removed'} pvc-protection finalizer`, { claim: key });
    },
  });
  const volumes = newController<string>({
    name: 'pvprotection',
    workers,
    metrics: o.metrics,
    log,
    sources: [
      watch(pvs, (q) => {
        const onVolume = (v: PersistentVolume): void => {
          const hasF = (v.metadata?.finalizers ?? []).includes(PV_PROTECTION_FINALIZER);
          if (v.metadata?.deletionTimestamp ? hasF : !hasF) q.add(v.metadata!.name!);
        };
        return { onAdd: onVolume, onUpdate: (_, v) => onVolume(v) };
      }),
    ],
    reconcile: async (name) => {
      const pv = pvs.lister.get(name);
      if (!pv) return;
      const d = pvProtectionDecision(pv);
      if (d.kind !== 'add' && d.kind !== 'remove') return;
      const next = structuredClone(pv);
      next.metadata!.finalizers = applyFinalizerDecision(pv.metadata?.finalizers, PV_PROTECTION_FINALIZER, d);
      await updateUnlessGone(() => pvApi.update(next));
    },
  });
  await Promise.all([claims.run(signal), volumes.run(signal)]);
}
