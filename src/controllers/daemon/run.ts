/**
 * The daemon controller (kube-controller-manager's "daemonset") on the shared runtime: a set is
 * reconciled when it changes, when a pod it controls (or an orphan it selects) changes, when a
 * node is added, removed or relabelled/retainted, and when one of its revisions goes. Each pass
 * settles the current revision, adopts and releases pods, executes the decision (creations in
 * slow-start batches, pinned to their node through node affinity and left to the scheduler,
 * then deletions), writes the status and trims the revision history.
 */
import type { ControllerRevision, DaemonSet, DaemonSetStatus } from 'kubernetes-types/apps/v1.js';
import type { Node, Pod } from 'kubernetes-types/core/v1.js';
import { matchesLabels } from '../../api/selectors.js';
import { newController, newEventRecorder, objectOf, watch, type RestClient } from '../../client/index.js';
import { metaNamespaceKey, splitNamespacedKey } from '../../kube/keys.js';
import { CONTROLLER_REVISION_HASH_LABEL, newControllerRef, slowStartBatches } from '../../kube/workloads.js';
import { AlreadyExistsError, ConflictError, NotFoundError, assertNever, toStowageError } from '../../util/errors.js';
import { newLogger } from '../../util/log.js';
import type { MetricsRegistry } from '../../util/metrics.js';
import { sortedJson } from '../../util/sortedjson.js';
import { newExpectations } from '../expectations.js';
import { newControllerInformers, queueOwnKey, type ControllerInformers } from '../informers.js';
import { claimAndPatch, controllerKey, selectorOf } from '../refmanager.js';
import { sortedRevisions } from '../statefulset/revision.js';
import { daemonStatus, decideDaemonSet, type DaemonDecision } from './decide.js';
import { newFailedPodBackoff } from './failedbackoff.js';
import { historyToDelete, planDaemonRevision, revisionHash, revisionMatches } from './revision.js';
import { daemonPodTemplate, pinToNode, targetNodeName } from './util.js';

const log = newLogger('daemonset');

/** kube's BurstReplicas: at most this many creations or deletions per pass. */
const BURST_REPLICAS = 250;

export interface DaemonSetControllerOptions {
  readonly client: RestClient;
  readonly signal: AbortSignal;
  readonly informers?: ControllerInformers;
  readonly metrics?: MetricsRegistry;
  readonly workers?: number;
}

/** Whether a node change can change where daemon pods run (kube's shouldIgnoreNodeUpdate, inverted). */
function nodePlacementChanged(a: Node, b: Node): boolean {
  return (
    sortedJson(a.metadata?.labels ?? {}) !== sortedJson(b.metadata?.labels ?? {}) ||
    sortedJson(a.spec?.taints ?? []) !== sortedJson(b.spec?.taints ?? []) ||
    !!a.spec?.unschedulable !== !!b.spec?.unschedulable
  );
}

/** The status as kube serializes it: the omitempty counts left out at zero. */
function compactStatus(s: DaemonSetStatus): DaemonSetStatus {
  const out: Record<string, unknown> = { ...s };
  for (const k of ['updatedNumberScheduled', 'numberAvailable', 'numberUnavailable', 'observedGeneration']) {
    if (out[k] === 0) delete out[k];
  }
  return out as unknown as DaemonSetStatus;
}

/** Runs the daemon controller until `signal` aborts. */
export async function runDaemonSetController(o: DaemonSetControllerOptions): Promise<void> {
  const { client } = o;
  const { daemonSets, pods, nodes, controllerRevisions } = o.informers ?? newControllerInformers(client);
  const setsApi = client.resource('DaemonSet');
  const podsApi = client.resource('Pod');
  const revisionsApi = client.resource('ControllerRevision');
  const recorder = newEventRecorder({ client, component: 'daemonset-controller' });
  const expectations = newExpectations();
  const failedBackoff = newFailedPodBackoff();
  const backoffKey = (ds: DaemonSet, node: string): string =>
    `${ds.metadata?.uid ?? ''}/${ds.status?.observedGeneration ?? 0}/${node}`;

  /** constructHistory: the set's revisions (adopted/released) and its current one, written if needed. */
  const settleRevisions = async (
    ds: DaemonSet,
    ns: string,
  ): Promise<{ owned: ControllerRevision[]; current: ControllerRevision } | undefined> => {
    const owned = sortedRevisions(
      await claimAndPatch({
        owner: ds,
        ref: newControllerRef(ds, 'apps/v1', 'DaemonSet'),
        candidates: controllerRevisions.lister.list(ns),
        patch: (name, body) => revisionsApi.patch(name, 'strategic', body, { namespace: ns }),
      }),
    );
    const plan = planDaemonRevision(ds, owned);
    switch (plan.kind) {
      case 'ready':
        return { owned, current: plan.update };
      case 'renumber': {
        const updated = await revisionsApi.update({ ...plan.revision, revision: plan.to }, { namespace: ns });
        const rest = owned.filter((r) => r.metadata?.uid !== updated.metadata?.uid);
        return { owned: [...rest, updated], current: updated };
      }
      case 'create':
        try {
          const created = await revisionsApi.create(plan.revision, { namespace: ns });
          return { owned: [...owned, created], current: created };
        } catch (e) {
          if (!(e instanceof AlreadyExistsError)) throw e;
          const existing = await revisionsApi.get(plan.revision.metadata?.name ?? '', { namespace: ns });
          if (revisionMatches(ds, existing)) return { owned: [...owned, existing], current: existing };
          // A hash collision with another object's revision: count it so the next name differs.
          const collisionCount = (ds.status?.collisionCount ?? 0) + 1;
          await setsApi.updateStatus(
            { ...ds, status: { ...emptyStatus(), ...ds.status, collisionCount } },
            { namespace: ns },
          );
          return undefined;
        }
      default:
        return assertNever(plan);
    }
  };

  /** syncNodes' creations: one pod per node, pinned to it, in slow-start batches; stops at a failing batch. */
  const createPods = async (ds: DaemonSet, key: string, nodesToRun: readonly string[], hash: string): Promise<void> => {
    const ns = ds.metadata?.namespace ?? '';
    const template = daemonPodTemplate(ds, hash);
    const ref = newControllerRef(ds, 'apps/v1', 'DaemonSet');
    let next = 0;
    for (const size of slowStartBatches(nodesToRun.length)) {
      const batch = nodesToRun.slice(next, next + size);
      next += size;
      const results = await Promise.allSettled(
        batch.map((node) => {
          const pod: Pod = {
            apiVersion: 'v1',
            kind: 'Pod',
            metadata: {
              ...template.metadata,
              generateName: `${ds.metadata?.name ?? ''}-`,
              namespace: ns,
              ownerReferences: [ref],
            },
            spec: { ...template.spec!, affinity: pinToNode(template.spec?.affinity, node) },
          };
          return podsApi.create(pod, { namespace: ns });
        }),
      );
      const created = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
      expectations.expect(key, { created: created.map((p) => p.metadata?.name ?? '') }, Date.now());
      for (const p of created)
        recorder.event(ds, 'Normal', 'SuccessfulCreate', `Created pod: ${p.metadata?.name ?? ''}`);
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) {
        recorder.event(ds, 'Warning', 'FailedCreate', `Error creating: ${toStowageError(failed.reason).message}`);
        throw failed.reason;
      }
    }
  };

  /** syncNodes' deletions, all at once; a pod gone already is deleted. */
  const deletePods = async (ds: DaemonSet, key: string, victims: readonly Pod[]): Promise<void> => {
    const results = await Promise.allSettled(
      victims.map((p) =>
        podsApi.delete(p.metadata?.name ?? '', {
          namespace: p.metadata?.namespace,
          preconditions: { uid: p.metadata?.uid },
        }),
      ),
    );
    let firstError: unknown;
    results.forEach((r, i) => {
      const p = victims[i]!;
      if (r.status === 'fulfilled' || r.reason instanceof NotFoundError) {
        if (r.status === 'fulfilled') expectations.expect(key, { deleted: [p.metadata?.uid ?? ''] }, Date.now());
        recorder.event(ds, 'Normal', 'SuccessfulDelete', `Deleted pod: ${p.metadata?.name ?? ''}`);
      } else {
        recorder.event(ds, 'Warning', 'FailedDelete', `Error deleting: ${toStowageError(r.reason).message}`);
        firstError ??= r.reason;
      }
    });
    if (firstError) throw firstError;
  };

  const execute = async (ds: DaemonSet, key: string, d: DaemonDecision, hash: string): Promise<void> => {
    const now = Date.now();
    for (const p of d.failed) {
      const node = targetNodeName(p) ?? '';
      failedBackoff.next(backoffKey(ds, node), now);
      recorder.event(
        ds,
        'Warning',
        'FailedDaemonPod',
        `Found failed daemon pod ${p.metadata?.namespace ?? ''}/${p.metadata?.name ?? ''} on node ${node}, will try to kill it`,
      );
    }
    const errors: unknown[] = [];
    await createPods(ds, key, d.create.slice(0, BURST_REPLICAS), hash).catch((e: unknown) => errors.push(e));
    await deletePods(ds, key, d.delete.slice(0, BURST_REPLICAS)).catch((e: unknown) => errors.push(e));
    if (errors.length) throw errors[0];
  };

  /** storeDaemonSetStatus: written only when a count changed or the generation is newly observed. */
  const writeStatus = async (ds: DaemonSet, status: DaemonSetStatus): Promise<void> => {
    const full = compactStatus({
      ...status,
      ...(ds.status?.collisionCount ? { collisionCount: ds.status.collisionCount } : {}),
    });
    if (sortedJson(full) === sortedJson(ds.status ?? {})) return;
    try {
      await setsApi.updateStatus({ ...ds, status: full }, { namespace: ds.metadata?.namespace });
    } catch (e) {
      // Gone, or changed meanwhile: its delete or update event brings it back.
      if (!(e instanceof NotFoundError) && !(e instanceof ConflictError)) throw e;
    }
  };

  const controller = newController<string>({
    name: 'daemonset',
    workers: o.workers ?? 2,
    metrics: o.metrics,
    log,
    sources: [
      watch(daemonSets, queueOwnKey),
      watch(pods, (q) => {
        const onPod = (p: Pod): void => {
          const k = controllerKey(p, 'DaemonSet');
          if (k) q.add(k);
          else if (!p.metadata?.ownerReferences?.some((r) => r.controller === true)) {
            // An orphan may be adopted by a set selecting it.
            for (const ds of daemonSets.lister.list(p.metadata?.namespace)) {
              if (matchesLabels(selectorOf(ds), p.metadata?.labels)) q.add(metaNamespaceKey(ds));
            }
          }
        };
        return { onAdd: onPod, onUpdate: (_, p) => onPod(p), onDelete: (p) => onPod(objectOf(p)) };
      }),
      watch(nodes, (q) => {
        const all = (): void => {
          for (const ds of daemonSets.lister.list()) q.add(metaNamespaceKey(ds));
        };
        return { onAdd: all, onUpdate: (a, b) => nodePlacementChanged(a, b) && all(), onDelete: all };
      }),
      watch(controllerRevisions, (q) => ({
        onDelete: (x) => {
          const k = controllerKey(objectOf(x), 'DaemonSet');
          if (k) q.add(k);
        },
      })),
    ],
    reconcile: async (key) => {
      const [ns, name] = splitNamespacedKey(key);
      const ds = daemonSets.lister.get(ns, name);
      if (!ds) {
        expectations.forget(key);
        return;
      }
      const sel = ds.spec?.selector;
      if (sel && !sel.matchLabels && !sel.matchExpressions) {
        recorder.event(
          ds,
          'Warning',
          'SelectingAll',
          'This daemon set is selecting all pods. A non-empty selector is required.',
        );
        return;
      }
      // Being deleted: its revisions may be gone or orphaned already, so the current one is unknown.
      if (ds.metadata?.deletionTimestamp) return;
      const revisions = await settleRevisions(ds, ns);
      if (!revisions) return { requeueAfterMs: 1 }; // collisionCount raised: try the next name
      const hash = revisionHash(revisions.current);
      const owned = await claimAndPatch({
        owner: ds,
        ref: newControllerRef(ds, 'apps/v1', 'DaemonSet'),
        candidates: pods.lister.list(ns),
        patch: (n, body) => podsApi.patch(n, 'strategic', body, { namespace: ns }),
      });
      const now = Date.now();
      const state = {
        ds,
        nodes: nodes.lister.list(),
        pods: owned,
        hash,
        now,
        failedBackoffMs: (node: string) => failedBackoff.remaining(backoffKey(ds, node), now),
      };
      const minReady = ds.spec?.minReadySeconds ?? 0;
      // Pods just created or deleted not in the cache yet: only the status, without observing the generation.
      if (!expectations.satisfied(key, owned, now)) {
        await writeStatus(ds, { ...daemonStatus(state), observedGeneration: ds.status?.observedGeneration ?? 0 });
        return { requeueAfterMs: 1000 };
      }
      const decision = decideDaemonSet(state);
      let failure: unknown;
      await execute(ds, key, decision, hash).catch((e: unknown) => (failure = e));
      const status = daemonStatus(state);
      await writeStatus(ds, { ...status, observedGeneration: ds.metadata?.generation ?? 0 });
      if (failure !== undefined) throw failure;
      const live = new Set(owned.map((p) => p.metadata?.labels?.[CONTROLLER_REVISION_HASH_LABEL] ?? ''));
      for (const r of historyToDelete(ds, revisions.owned, revisions.current, live)) {
        try {
          await revisionsApi.delete(r.metadata?.name ?? '', { namespace: ns });
        } catch (e) {
          if (!(e instanceof NotFoundError)) throw e;
        }
      }
      log.debug('daemonset synced', { set: key, create: decision.create.length, delete: decision.delete.length });
      // Resync after minReadySeconds as a last line of defence against clock skew.
      const again = [
        decision.requeueAfterMs,
        minReady > 0 && status.numberReady !== status.numberAvailable ? minReady * 1000 : undefined,
      ].filter((x): x is number => x !== undefined);
      if (again.length) return { requeueAfterMs: Math.min(...again) };
    },
  });
  try {
    await controller.run(o.signal);
  } finally {
    await recorder.close();
  }
}

function emptyStatus(): DaemonSetStatus {
  return { currentNumberScheduled: 0, desiredNumberScheduled: 0, numberMisscheduled: 0, numberReady: 0 };
}
