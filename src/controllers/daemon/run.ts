/**
 * The daemon controller (kube-controller-manager's "daemonset") on the shared runtime: a set is
 * reconciled when it changes, when a pod it controls (or an orphan it selects) changes, when a
 * node is added, removed or relabelled/retainted, and when one of its revisions goes. Each pass
 * settles the current revision, adopts and releases pods, executes the decision (creations in
 * slow-start batches, pinned to their node through node affinity and left to the scheduler,
 * then deletions), writes the status and trims the revision history.
 */
import type { Node, Pod } from 'kubernetes-types/core/v1.js';
import { matchesLabels } from '../../kube/selectors.js';
import { newController, newEventRecorder, objectOf, watch, type RestClient } from '../../client/index.js';
import { metaNamespaceKey, splitNamespacedKey } from '../../kube/keys.js';
import { CONTROLLER_REVISION_HASH_LABEL, newControllerRef } from '../../kube/workloads.js';
import { NotFoundError } from '../../util/errors.js';
import { newLogger } from '../../util/log.js';
import type { MetricsRegistry } from '../../util/metrics.js';
import { sortedJson } from '../../util/sortedjson.js';
import { newExpectations } from '../expectations.js';
import { newControllerInformers, queueOwnKey, type ControllerInformers } from '../informers.js';
import { claimAndPatch, controllerKey, selectorOf } from '../refmanager.js';
import { daemonStatus, decideDaemonSet } from './decide.js';
import { newFailedPodBackoff } from './failedbackoff.js';
import { historyToDelete, revisionHash } from './revision.js';
import { executeDecision, failedBackoffKey, settleRevisions, writeStatus, type DaemonWrites } from './writes.js';

const log = newLogger('daemonset');

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

/** What one pass reads and writes through. */
interface SyncDeps {
  readonly w: DaemonWrites;
  readonly daemonSets: ControllerInformers['daemonSets'];
  readonly pods: ControllerInformers['pods'];
  readonly nodes: ControllerInformers['nodes'];
}

/**
 * syncDaemonSet: settle the current revision, claim the pods, and (once the cache shows this
 * controller's own writes) execute the decision; the status after, then the history trimmed.
 */
async function syncDaemonSet(d: SyncDeps, key: string): Promise<{ requeueAfterMs?: number } | undefined> {
  const [ns, name] = splitNamespacedKey(key);
  const ds = d.daemonSets.lister.get(ns, name);
  if (!ds) {
    d.w.expectations.forget(key);
    return;
  }
  const sel = ds.spec?.selector;
  if (sel && !sel.matchLabels && !sel.matchExpressions) {
    d.w.recorder.event(
      ds,
      'Warning',
      'SelectingAll',
      'This daemon set is selecting all pods. A non-empty selector is required.',
    );
    return;
  }
  // Being deleted: its revisions may be gone or orphaned already, so the current one is unknown.
  if (ds.metadata?.deletionTimestamp) return;
  const revisions = await settleRevisions(d.w, ds, ns);
  if (!revisions) return { requeueAfterMs: 1 }; // collisionCount raised: try the next name
  const hash = revisionHash(revisions.current);
  const owned = await claimAndPatch({
    owner: ds,
    ref: newControllerRef(ds, 'apps/v1', 'DaemonSet'),
    candidates: d.pods.lister.list(ns),
    patch: (n, body) => d.w.podsApi.patch(n, 'strategic', body, { namespace: ns }),
  });
  const now = Date.now();
  const state = {
    ds,
    nodes: d.nodes.lister.list(),
    pods: owned,
    hash,
    now,
    failedBackoffMs: (node: string) => d.w.failedBackoff.remaining(failedBackoffKey(ds, node), now),
  };
  const minReady = ds.spec?.minReadySeconds ?? 0;
  // Pods just created or deleted not in the cache yet: only the status, without observing the generation.
  if (!d.w.expectations.satisfied(key, owned, now)) {
    await writeStatus(d.w, ds, { ...daemonStatus(state), observedGeneration: ds.status?.observedGeneration ?? 0 });
    return { requeueAfterMs: 1000 };
  }
  const decision = decideDaemonSet(state);
  let failure: unknown;
  await executeDecision(d.w, ds, key, decision, hash).catch((e: unknown) => (failure = e));
  const status = daemonStatus(state);
  await writeStatus(d.w, ds, { ...status, observedGeneration: ds.metadata?.generation ?? 0 });
  if (failure !== undefined) throw failure;
  const live = new Set(owned.map((p) => p.metadata?.labels?.[CONTROLLER_REVISION_HASH_LABEL] ?? ''));
  for (const r of historyToDelete(ds, revisions.owned, revisions.current, live)) {
    try {
      await d.w.revisionsApi.delete(r.metadata?.name ?? '', { namespace: ns });
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
  return undefined;
}

/** Runs the daemon controller until `signal` aborts. */
export async function runDaemonSetController(o: DaemonSetControllerOptions): Promise<void> {
  const { client } = o;
  const { daemonSets, pods, nodes, controllerRevisions } = o.informers ?? newControllerInformers(client);
  const podsApi = client.resource('Pod');
  const recorder = newEventRecorder({ client, component: 'daemonset-controller' });
  const expectations = newExpectations();
  const failedBackoff = newFailedPodBackoff();
  const w: DaemonWrites = {
    setsApi: client.resource('DaemonSet'),
    podsApi,
    revisionsApi: client.resource('ControllerRevision'),
    controllerRevisions,
    recorder,
    expectations,
    failedBackoff,
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
    reconcile: (key) => syncDaemonSet({ w, daemonSets, pods, nodes }, key),
  });
  try {
    await controller.run(o.signal);
  } finally {
    await recorder.close();
  }
}
