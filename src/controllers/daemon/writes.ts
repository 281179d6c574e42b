/**
 * The daemon controller's writes (its executor): the current ControllerRevision settled
 * (constructHistory), a decision's pod creations and deletions with kube's events and the
 * expectations they raise (syncNodes), the status when it changed (storeDaemonSetStatus).
 */
import type { ControllerRevision, DaemonSet, DaemonSetStatus } from 'kubernetes-types/apps/v1.js';
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { EventRecorder, Informer, ResourceClient } from '../../client/index.js';
import { newControllerRef, slowStartBatches } from '../../kube/workloads.js';
import { AlreadyExistsError, ConflictError, NotFoundError, assertNever, toStowageError } from '../../util/errors.js';
import { sortedJson } from '../../util/sortedjson.js';
import type { Expectations } from '../expectations.js';
import { deleteOwnedPods } from '../podcontrol.js';
import { claimAndPatch } from '../refmanager.js';
import { sortedRevisions } from '../statefulset/revision.js';
import type { DaemonDecision } from './decide.js';
import type { FailedPodBackoff } from './failedbackoff.js';
import { planDaemonRevision, revisionMatches } from './revision.js';
import { daemonPodTemplate, pinToNode, targetNodeName } from './util.js';

/** kube's BurstReplicas: at most this many creations or deletions per pass. */
const BURST_REPLICAS = 250;

/** What the writes need: the API, the set's events, expectations and the failed-pod backoff. */
export interface DaemonWrites {
  readonly setsApi: ResourceClient<DaemonSet>;
  readonly podsApi: ResourceClient<Pod>;
  readonly revisionsApi: ResourceClient<ControllerRevision>;
  readonly controllerRevisions: Informer<ControllerRevision>;
  readonly recorder: EventRecorder;
  readonly expectations: Expectations;
  readonly failedBackoff: FailedPodBackoff;
}

/** kube's failedPodsBackoffKey: set, observed generation, node. */
export function failedBackoffKey(ds: DaemonSet, node: string): string {
  return `${ds.metadata?.uid ?? ''}/${ds.status?.observedGeneration ?? 0}/${node}`;
}

/** The status as kube serializes it: the omitempty counts left out at zero. */
function compactStatus(s: DaemonSetStatus): DaemonSetStatus {
  const out: Record<string, unknown> = { ...s };
  for (const k of ['updatedNumberScheduled', 'numberAvailable', 'numberUnavailable', 'observedGeneration']) {
    if (out[k] === 0) delete out[k];
  }
  return out as unknown as DaemonSetStatus;
}

function emptyStatus(): DaemonSetStatus {
  return { currentNumberScheduled: 0, desiredNumberScheduled: 0, numberMisscheduled: 0, numberReady: 0 };
}

/** constructHistory: the set's revisions (adopted/released) and its current one, written if needed. */
export async function settleRevisions(
  w: DaemonWrites,
  ds: DaemonSet,
  ns: string,
): Promise<{ owned: ControllerRevision[]; current: ControllerRevision } | undefined> {
  const owned = sortedRevisions(
    await claimAndPatch({
      owner: ds,
      ref: newControllerRef(ds, 'apps/v1', 'DaemonSet'),
      candidates: w.controllerRevisions.lister.list(ns),
      patch: (name, body) => w.revisionsApi.patch(name, 'strategic', body, { namespace: ns }),
    }),
  );
  const plan = planDaemonRevision(ds, owned);
  switch (plan.kind) {
    case 'ready':
      return { owned, current: plan.update };
    case 'renumber': {
      const updated = await w.revisionsApi.update({ ...plan.revision, revision: plan.to }, { namespace: ns });
      const rest = owned.filter((r) => r.metadata?.uid !== updated.metadata?.uid);
      return { owned: [...rest, updated], current: updated };
    }
    case 'create':
      try {
        const created = await w.revisionsApi.create(plan.revision, { namespace: ns });
        return { owned: [...owned, created], current: created };
      } catch (e) {
        if (!(e instanceof AlreadyExistsError)) throw e;
        const existing = await w.revisionsApi.get(plan.revision.metadata?.name ?? '', { namespace: ns });
        if (revisionMatches(ds, existing)) return { owned: [...owned, existing], current: existing };
        // A hash collision with another object's revision: count it so the next name differs.
        const collisionCount = (ds.status?.collisionCount ?? 0) + 1;
        await w.setsApi.updateStatus(
          { ...ds, status: { ...emptyStatus(), ...ds.status, collisionCount } },
          { namespace: ns },
        );
        return undefined;
      }
    default:
      return assertNever(plan);
  }
}

/** syncNodes' creations: one pod per node, pinned to it, in slow-start batches; stops at a failing batch. */
async function createPods(
  w: DaemonWrites,
  ds: DaemonSet,
  key: string,
  nodesToRun: readonly string[],
  hash: string,
): Promise<void> {
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
        return w.podsApi.create(pod, { namespace: ns });
      }),
    );
    const created = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    w.expectations.expect(key, { created: created.map((p) => p.metadata?.name ?? '') }, Date.now());
    for (const p of created)
      w.recorder.event(ds, 'Normal', 'SuccessfulCreate', `Created pod: ${p.metadata?.name ?? ''}`);
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) {
      w.recorder.event(ds, 'Warning', 'FailedCreate', `Error creating: ${toStowageError(failed.reason).message}`);
      throw failed.reason;
    }
  }
}

export async function executeDecision(
  w: DaemonWrites,
  ds: DaemonSet,
  key: string,
  d: DaemonDecision,
  hash: string,
): Promise<void> {
  const now = Date.now();
  for (const p of d.failed) {
    const node = targetNodeName(p) ?? '';
    w.failedBackoff.next(failedBackoffKey(ds, node), now);
    w.recorder.event(
      ds,
      'Warning',
      'FailedDaemonPod',
      `Found failed daemon pod ${p.metadata?.namespace ?? ''}/${p.metadata?.name ?? ''} on node ${node}, will try to kill it`,
    );
  }
  const errors: unknown[] = [];
  await createPods(w, ds, key, d.create.slice(0, BURST_REPLICAS), hash).catch((e: unknown) => errors.push(e));
  await deleteOwnedPods({
    owner: ds,
    key,
    victims: d.delete.slice(0, BURST_REPLICAS),
    api: w.podsApi,
    recorder: w.recorder,
    expectations: w.expectations,
  }).catch((e: unknown) => errors.push(e));
  if (errors.length) throw errors[0];
}

/** storeDaemonSetStatus: written only when a count changed or the generation is newly observed. */
export async function writeStatus(w: DaemonWrites, ds: DaemonSet, status: DaemonSetStatus): Promise<void> {
  const full = compactStatus({
    ...status,
    ...(ds.status?.collisionCount ? { collisionCount: ds.status.collisionCount } : {}),
  });
  if (sortedJson(full) === sortedJson(ds.status ?? {})) return;
  try {
    await w.setsApi.updateStatus({ ...ds, status: full }, { namespace: ds.metadata?.namespace });
  } catch (e) {
    // Gone, or changed meanwhile: its delete or update event brings it back.
    if (!(e instanceof NotFoundError) && !(e instanceof ConflictError)) throw e;
  }
}
