/**
 * The Deployment controller on the shared runtime: claims the ReplicaSets its selector matches,
 * then executes one sync's plan (decide.ts) — create, resize or delete ReplicaSets, with
 * ScalingReplicaSet events — and writes the revision annotation and the status.
 */
import type { Deployment, ReplicaSet } from 'kubernetes-types/apps/v1.js';
import { matchesLabels } from '../../kube/selectors.js';
import {
  newController,
  newEventRecorder,
  objectOf,
  watch,
  type RestClient,
  type ReconcileResult,
} from '../../client/index.js';
import { metaNamespaceKey, splitNamespacedKey } from '../../kube/keys.js';
import { controllerRefOf, newControllerRef } from '../../kube/workloads.js';
import { AlreadyExistsError, assertNever, toStowageError } from '../../util/errors.js';
import { newLogger } from '../../util/log.js';
import { metaTime } from '../../util/metatime.js';
import type { MetricsRegistry } from '../../util/metrics.js';
import { claimAndPatch, selectorOf } from '../refmanager.js';
import {
  CONTROLLER_UID_INDEX,
  newControllerInformers,
  queueOwnKey,
  type ControllerInformers,
  mapToKeys,
} from '../informers.js';
import { planDeployment, type DeploymentAction } from './decide.js';
import { REVISION_ANNOTATION, replicasOf, templatesEqualIgnoringHash } from './util.js';

const log = newLogger('deployment');

export interface DeploymentControllerOptions {
  readonly client: RestClient;
  readonly signal: AbortSignal;
  readonly informers?: ControllerInformers;
  readonly workers?: number;
  readonly metrics?: MetricsRegistry;
}

/** Runs the Deployment controller until `signal` aborts. */
export async function runDeploymentController(o: DeploymentControllerOptions): Promise<void> {
  const { client } = o;
  const { pods, replicaSets, deployments } = o.informers ?? newControllerInformers(client);
  const rsApi = client.resource('ReplicaSet');
  const dApi = client.resource('Deployment');
  const recorder = newEventRecorder({ client, component: 'deployment-controller' });

  const ownersOf = (rs: ReplicaSet): string[] => {
    const ref = controllerRefOf(rs);
    const ns = rs.metadata?.namespace ?? '';
    if (ref) return ref.kind === 'Deployment' ? [`${ns}/${ref.name}`] : [];
    return deployments.lister
      .list(ns)
      .filter((d) => matchesLabels(selectorOf(d), rs.metadata?.labels))
      .map(metaNamespaceKey);
  };

  const controller = newController<string>({
    name: 'deployment',
    workers: o.workers ?? 2,
    metrics: o.metrics,
    log,
    sources: [
      watch(deployments, queueOwnKey),
      watch(replicaSets, mapToKeys(ownersOf, { includeOld: true })),
      // Recreate waits for the old pods to be gone: their deletion brings the Deployment back.
      watch(pods, (q) => ({
        onDelete: (x) => {
          const ref = controllerRefOf(objectOf(x));
          const rs =
            ref?.kind === 'ReplicaSet'
              ? replicaSets.lister.get(objectOf(x).metadata?.namespace ?? '', ref.name)
              : undefined;
          if (rs) ownersOf(rs).forEach((k) => q.add(k));
        },
      })),
    ],
    reconcile: async (key): Promise<ReconcileResult | void> => {
      const [ns, name] = splitNamespacedKey(key);
      const d = deployments.lister.get(ns, name);
      if (!d) return;
      const owned = await claimAndPatch({
        owner: d,
        ref: newControllerRef(d, 'apps/v1', 'Deployment'),
        candidates: replicaSets.lister.list(ns),
        patch: (n, body) => rsApi.patch(n, 'strategic', body, { namespace: ns }),
      });
      const now = Date.now();
      const plan = planDeployment({
        d,
        replicaSets: owned,
        podsOf: (rs) => (rs.metadata?.uid ? pods.byIndex(CONTROLLER_UID_INDEX, rs.metadata.uid) : []),
        nowMs: now,
        nowIso: metaTime(now),
      });
      let status = plan.status;
      for (const a of plan.actions) {
        const collision = await execute(d, a);
        if (collision) status = { ...status, collisionCount: (d.status?.collisionCount ?? 0) + 1 };
      }
      // The revision annotation goes with the status (kube writes both through /status: no new generation).
      const annotations =
        plan.revision !== undefined
          ? { ...(d.metadata?.annotations ?? {}), [REVISION_ANNOTATION]: plan.revision }
          : d.metadata?.annotations;
      if (plan.revision !== undefined || JSON.stringify(status) !== JSON.stringify(d.status ?? {})) {
        await dApi.updateStatus({ ...d, metadata: { ...d.metadata, annotations }, status }, { namespace: ns });
      }
      if (plan.requeueAfterMs !== undefined) return { requeueAfterMs: plan.requeueAfterMs };
    },
  });

  /** Executes one action; true when the new ReplicaSet's name is taken by another template (a hash collision). */
  async function execute(d: Deployment, a: DeploymentAction): Promise<boolean> {
    const ns = d.metadata?.namespace;
    switch (a.kind) {
      case 'create': {
        try {
          const rs = await rsApi.create(a.rs, { namespace: ns });
          recorder.event(
            d,
            'Normal',
            'ScalingReplicaSet',
            `Scaled up replica set ${rs.metadata?.name ?? ''} to ${replicasOf(rs)}`,
          );
          log.info('created replica set', { deployment: metaNamespaceKey(d), replicaSet: rs.metadata?.name });
          return false;
        } catch (e) {
          if (!(e instanceof AlreadyExistsError)) {
            recorder.event(
              d,
              'Warning',
              'ReplicaSetCreateError',
              `Failed to create new replica set "${a.rs.metadata?.name ?? ''}": ${toStowageError(e).message}`,
            );
            throw e;
          }
          const existing = await rsApi.get(a.rs.metadata!.name!, { namespace: ns });
          // Ours with the same template: the cache was behind. Otherwise the hash collided: count it and retry.
          if (
            controllerRefOf(existing)?.uid === d.metadata?.uid &&
            templatesEqualIgnoringHash(existing.spec?.template, d.spec?.template)
          )
            return false;
          return true;
        }
      }
      case 'update': {
        const from = replicasOf(a.rs);
        const rs = await rsApi.update(
          {
            ...a.rs,
            metadata: { ...a.rs.metadata, annotations: a.annotations },
            spec: { ...a.rs.spec!, replicas: a.replicas },
          },
          { namespace: ns },
        );
        if (a.replicas !== from) {
          recorder.event(
            d,
            'Normal',
            'ScalingReplicaSet',
            `Scaled ${a.replicas > from ? 'up' : 'down'} replica set ${rs.metadata?.name ?? ''} to ${a.replicas} from ${from}`,
          );
        }
        return false;
      }
      case 'delete':
        await rsApi.deleteIfExists(a.rs.metadata!.name!, { namespace: ns, preconditions: { uid: a.rs.metadata?.uid } });
        log.info('deleted old replica set beyond the revision history limit', {
          deployment: metaNamespaceKey(d),
          replicaSet: a.rs.metadata?.name,
        });
        return false;
      default:
        return assertNever(a);
    }
  }

  try {
    await controller.run(o.signal);
  } finally {
    await recorder.close();
  }
}
