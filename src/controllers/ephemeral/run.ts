/**
 * The ephemeral-volume controller on the shared runtime: pods with generic ephemeral volumes are
 * reconciled when they appear or change, and again when a claim they name appears (it may not be
 * theirs) or is deleted (it is re-created while the pod lives, as upstream).
 */
import type { PersistentVolumeClaim, Pod } from 'kubernetes-types/core/v1.js';
import { newController, newEventRecorder, objectOf, watch, type RestClient } from '../../client/index.js';
import { metaNamespaceKey, splitNamespacedKey } from '../../kube/keys.js';
import { AlreadyExistsError, assertNever } from '../../util/errors.js';
import { newLogger } from '../../util/log.js';
import type { MetricsRegistry } from '../../util/metrics.js';
import { POD_CLAIM_INDEX, newControllerInformers, type ControllerInformers } from '../informers.js';
import { ephemeralActions, hasEphemeralVolumes } from './decide.js';

const log = newLogger('ephemeral-volume');

export interface EphemeralRunOptions {
  readonly client: RestClient;
  readonly signal: AbortSignal;
  readonly informers?: ControllerInformers;
  readonly metrics?: MetricsRegistry;
  readonly workers?: number;
}

/** Runs the ephemeral-volume controller until `signal` aborts. */
export async function runEphemeralVolumeController(o: EphemeralRunOptions): Promise<void> {
  const { client } = o;
  const { pods, pvcs } = o.informers ?? newControllerInformers(client);
  const claimsApi = client.resource('PersistentVolumeClaim');
  const recorder = newEventRecorder({ client, component: 'ephemeral_volume' });
  const controller = newController<string>({
    name: 'ephemeral_volume',
    workers: o.workers ?? 2,
    metrics: o.metrics,
    log,
    sources: [
      watch(pods, (q) => {
        const onPod = (p: Pod): void => {
          if (hasEphemeralVolumes(p)) q.add(metaNamespaceKey(p));
        };
        return { onAdd: onPod, onUpdate: (_, p) => onPod(p) };
      }),
      watch(pvcs, (q) => {
        const podsOf = (c: PersistentVolumeClaim): void => {
          for (const p of pods.byIndex(POD_CLAIM_INDEX, metaNamespaceKey(c)))
            if (hasEphemeralVolumes(p)) q.add(metaNamespaceKey(p));
        };
        return { onAdd: podsOf, onDelete: (x) => podsOf(objectOf(x)) };
      }),
    ],
    reconcile: async (key) => {
      const [ns, name] = splitNamespacedKey(key);
      const pod = pods.lister.get(ns, name);
      if (!pod) return;
      for (const a of ephemeralActions(pod, (n, c) => pvcs.lister.get(n, c))) {
        switch (a.kind) {
          case 'create':
            try {
              await claimsApi.create(a.claim, { namespace: ns });
              log.info('created the claim of an ephemeral volume', { pod: key, claim: a.claim.metadata?.name });
            } catch (e) {
              // Created meanwhile (or by someone else): the claim's informer event brings the pod back.
              if (!(e instanceof AlreadyExistsError)) throw e;
            }
            break;
          case 'notForPod':
            // Not retried: deleting that claim re-queues the pod (upstream retries with backoff to the same end).
            recorder.event(pod, 'Warning', 'FailedBinding', `ephemeral volume ${a.volume}: ${a.message}`);
            break;
          default:
            assertNever(a);
        }
      }
    },
  });
  try {
    await controller.run(o.signal);
  } finally {
    await recorder.close();
  }
}
