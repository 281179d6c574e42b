/**
 * The StatefulSet controller on the shared runtime: a set is reconciled when it changes, when a
 * pod it controls changes, and when a claim in its namespace goes away. Each pass settles the
 * revisions, executes the decision's writes in order (stopping at the first failure, retried with
 * backoff), writes the status and trims the revision history.
 */
import type { ControllerRevision, StatefulSet } from 'kubernetes-types/apps/v1.js';
import type { PersistentVolumeClaim, Pod } from 'kubernetes-types/core/v1.js';
import {
  newController,
  newEventRecorder,
  objectOf,
  watch,
  type EventRecorder,
  type RestClient,
  type ReconcileResult,
} from '../../client/index.js';
import { metaNamespaceKey, splitNamespacedKey } from '../../kube/keys.js';
import { AlreadyExistsError, ConflictError, NotFoundError, assertNever, toStowageError } from '../../util/errors.js';
import { newLogger } from '../../util/log.js';
import type { MetricsRegistry } from '../../util/metrics.js';
import { newControllerInformers, mapToKeys, queueOwnKey, type ControllerInformers } from '../informers.js';
import { decideStatefulSet, type SetAction } from './decide.js';
import { parseOrdinal, podOrdinal, podRevision } from './identity.js';
import { claimAndPatch, controllerKey } from '../refmanager.js';
import { newControllerRef } from '../../kube/workloads.js';
import { newExpectations } from '../expectations.js';
import {
  currentRevisionOf,
  planUpdateRevision,
  revisionTemplate,
  revisionsToDelete,
  sortedRevisions,
} from './revision.js';
import { sortedJson } from '../../util/sortedjson.js';

const log = newLogger('statefulset');

export interface StatefulSetControllerOptions {
  readonly client: RestClient;
  readonly signal: AbortSignal;
  readonly informers?: ControllerInformers;
  readonly metrics?: MetricsRegistry;
  readonly workers?: number;
}

/** Runs the StatefulSet controller until `signal` aborts. */
export async function runStatefulSetController(o: StatefulSetControllerOptions): Promise<void> {
  const { client } = o;
  const { statefulSets, pods, pvcs, controllerRevisions } = o.informers ?? newControllerInformers(client);
  const setsApi = client.resource('StatefulSet');
  const podsApi = client.resource('Pod');
  const claimsApi = client.resource('PersistentVolumeClaim');
  const revisionsApi = client.resource('ControllerRevision');
  const recorder = newEventRecorder({ client, component: 'statefulset-controller' });
  const expectations = newExpectations();

  /**
   * Adopts the orphans `set` selects and releases what it no longer selects (pods named after the
   * set, or its revisions); returns what it controls then.
   */
  const claim = <T extends Pod | ControllerRevision>(
    set: StatefulSet,
    ns: string,
    candidates: readonly T[],
    api: typeof podsApi | typeof revisionsApi,
    filter?: (o: T) => boolean,
  ): Promise<T[]> =>
    claimAndPatch({
      owner: set,
      ref: newControllerRef(set, 'apps/v1', 'StatefulSet'),
      candidates,
      filter,
      patch: (name, body) => api.patch(name, 'strategic', body, { namespace: ns }),
    });

  /** Writes the update revision if needed; returns the revisions as they are after. */
  const settleRevisions = async (
    set: StatefulSet,
    ns: string,
  ): Promise<{ owned: ControllerRevision[]; update: ControllerRevision } | undefined> => {
    const owned = sortedRevisions(await claim(set, ns, controllerRevisions.lister.list(ns), revisionsApi));
    const plan = planUpdateRevision(set, owned);
    switch (plan.kind) {
      case 'ready':
        return { owned, update: plan.update };
      case 'renumber': {
        const updated = await revisionsApi.update({ ...plan.revision, revision: plan.to }, { namespace: ns });
        return { owned: [...owned.filter((r) => r.metadata?.uid !== updated.metadata?.uid), updated], update: updated };
      }
      case 'create':
        try {
          const created = await revisionsApi.create(plan.revision, { namespace: ns });
          return { owned: [...owned, created], update: created };
        } catch (e) {
          if (!(e instanceof AlreadyExistsError)) throw e;
          const existing = await revisionsApi.get(plan.revision.metadata?.name ?? '', { namespace: ns });
          if (
            sortedJson(existing.data) === sortedJson(plan.revision.data) &&
            existing.metadata?.ownerReferences?.some((r) => r.uid === set.metadata?.uid)
          ) {
            return {
              owned: [...owned.filter((r) => r.metadata?.uid !== existing.metadata?.uid), existing],
              update: existing,
            };
          }
          // A hash collision with another revision: count it so the next name differs.
          await setsApi.updateStatus(
            { ...set, status: { replicas: 0, ...set.status, collisionCount: (set.status?.collisionCount ?? 0) + 1 } },
            { namespace: ns },
          );
          return undefined;
        }
      default:
        return assertNever(plan);
    }
  };

  /**
   * One pod or claim write with the set's events (kube's recordPodEvent / recordClaimEvent): the
   * Normal event on success, FailedCreate/FailedDelete with the error; a create that finds the
   * object there already, or a delete that finds it gone, is done.
   */
  const write = async (
    set: StatefulSet,
    rec: EventRecorder,
    verb: 'create' | 'delete',
    what: { ok: string; failed: string },
    run: () => Promise<unknown>,
  ): Promise<void> => {
    try {
      await run();
      rec.event(set, 'Normal', verb === 'create' ? 'SuccessfulCreate' : 'SuccessfulDelete', what.ok);
    } catch (e) {
      if (verb === 'create' ? e instanceof AlreadyExistsError : e instanceof NotFoundError) return;
      rec.event(
        set,
        'Warning',
        verb === 'create' ? 'FailedCreate' : 'FailedDelete',
        `${what.failed} failed error: ${toStowageError(e).message}`,
      );
      throw e;
    }
  };

  const execute = async (set: StatefulSet, a: SetAction, ns: string, rec: EventRecorder): Promise<void> => {
    const setName = set.metadata?.name ?? '';
    switch (a.kind) {
      case 'createClaim': {
        const claim = a.claim.metadata?.name ?? '';
        const what = {
          ok: `create Claim ${claim} Pod ${a.pod} in StatefulSet ${setName} success`,
          failed: `create Claim ${claim} for Pod ${a.pod} in StatefulSet ${setName}`,
        };
        return write(set, rec, 'create', what, () => claimsApi.create(a.claim, { namespace: ns }));
      }
      case 'createPod': {
        const what = `create Pod ${a.pod.metadata?.name ?? ''} in StatefulSet ${setName}`;
        await write(set, rec, 'create', { ok: `${what} successful`, failed: what }, () =>
          podsApi.create(a.pod, { namespace: ns }),
        );
        expectations.expect(metaNamespaceKey(set), { created: [a.pod.metadata?.name ?? ''] }, Date.now());
        return;
      }
      case 'deletePod': {
        const pod = a.pod.metadata?.name ?? '';
        if (a.why === 'failed')
          rec.event(
            set,
            'Warning',
            'RecreatingFailedPod',
            `StatefulSet ${ns}/${setName} is recreating failed Pod ${pod}`,
          );
        const what = `delete Pod ${pod} in StatefulSet ${setName}`;
        await write(set, rec, 'delete', { ok: `${what} successful`, failed: what }, () =>
          podsApi.delete(pod, { namespace: ns, preconditions: { uid: a.pod.metadata?.uid } }),
        );
        expectations.expect(metaNamespaceKey(set), { deleted: [a.pod.metadata?.uid ?? ''] }, Date.now());
        return;
      }
      case 'setClaimOwners': {
        const claim: PersistentVolumeClaim = {
          ...a.claim,
          metadata: { ...a.claim.metadata, ownerReferences: a.ownerReferences },
        };
        if (!a.ownerReferences?.length) delete claim.metadata!.ownerReferences;
        try {
          await claimsApi.update(claim, { namespace: ns });
        } catch (e) {
          if (e instanceof NotFoundError) return;
          throw e;
        }
        return;
      }
      default:
        assertNever(a);
    }
  };

  /** The set a pod belongs to: its controller, or for an orphan the set it is named after (which may adopt it). */
  const setOfPod = (p: Pod): string | undefined => {
    const k = controllerKey(p, 'StatefulSet');
    if (k || p.metadata?.ownerReferences?.some((r) => r.controller === true)) return k;
    const parent = parseOrdinal(p.metadata?.name ?? '')?.parent;
    const set = parent && statefulSets.lister.get(p.metadata?.namespace ?? '', parent);
    return set ? metaNamespaceKey(set) : undefined;
  };

  const controller = newController<string>({
    name: 'statefulset',
    workers: o.workers ?? 2,
    metrics: o.metrics,
    log,
    sources: [
      watch(statefulSets, queueOwnKey),
      watch(pods, mapToKeys(setOfPod)),
      watch(pvcs, (q) => {
        // A claim going away may unblock an ordinal waiting to be re-created.
        const onClaim = (c: PersistentVolumeClaim): void => {
          for (const s of statefulSets.lister.list(c.metadata?.namespace)) {
            if (s.spec?.volumeClaimTemplates?.length) q.add(metaNamespaceKey(s));
          }
        };
        return { onDelete: (c) => onClaim(objectOf(c)) };
      }),
      watch(controllerRevisions, (q) => ({
        onDelete: (x) => {
          const k = controllerKey(objectOf(x), 'StatefulSet');
          if (k) q.add(k);
        },
      })),
    ],
    reconcile: async (key): Promise<ReconcileResult | void> => {
      const [ns, name] = splitNamespacedKey(key);
      const set = statefulSets.lister.get(ns, name);
      if (!set) {
        expectations.forget(key);
        return;
      }
      const revisions = await settleRevisions(set, ns);
      if (!revisions) return { requeueAfterMs: 1 }; // collisionCount raised: try the next name
      const current = currentRevisionOf(set, revisions.owned, revisions.update);
      // Pods named after the set (isMemberOf) may be adopted, and only they are kept, e.g. after `delete --cascade=orphan` and a re-create.
      const members = pods.lister
        .list(ns)
        .filter(
          (p) => podOrdinal(set, p) >= 0 || p.metadata?.ownerReferences?.some((r) => r.uid === set.metadata?.uid),
        );
      const owned = await claim(set, ns, members, podsApi, (p) => podOrdinal(set, p) >= 0);
      // Pods just created or deleted not in the cache yet: their events bring the set back.
      if (!expectations.satisfied(key, owned, Date.now())) return { requeueAfterMs: 1000 };
      const decision = decideStatefulSet({
        set,
        current: { name: current.metadata?.name ?? '', template: revisionTemplate(current) },
        update: { name: revisions.update.metadata?.name ?? '', template: revisionTemplate(revisions.update) },
        pods: owned,
        claim: (n) => pvcs.lister.get(ns, n),
        now: Date.now(),
      });
      for (const a of decision.actions) await execute(set, a, ns, recorder);
      if (sortedJson(decision.status) !== sortedJson(set.status ?? {})) {
        try {
          await setsApi.updateStatus({ ...set, status: decision.status }, { namespace: ns });
        } catch (e) {
          if (e instanceof NotFoundError) return;
          if (!(e instanceof ConflictError)) throw e;
          return; // the set changed meanwhile: its update event brings it back
        }
      }
      const live = new Set([
        current.metadata?.name ?? '',
        revisions.update.metadata?.name ?? '',
        ...owned.map(podRevision),
      ]);
      for (const r of revisionsToDelete(set, revisions.owned, live)) {
        try {
          await revisionsApi.delete(r.metadata?.name ?? '', { namespace: ns });
        } catch (e) {
          if (!(e instanceof NotFoundError)) throw e;
        }
      }
      log.debug('statefulset synced', {
        set: key,
        actions: decision.actions.length,
        ready: decision.status.readyReplicas,
      });
      if (decision.requeueAfterMs !== undefined) return { requeueAfterMs: decision.requeueAfterMs };
    },
  });
  try {
    await controller.run(o.signal);
  } finally {
    await recorder.close();
  }
}
