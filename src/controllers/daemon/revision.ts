/**
 * ControllerRevisions of a DaemonSet (daemon controller's constructHistory, snapshot and
 * cleanupHistory): the data is the patch that restores the set's template (as a StatefulSet's,
 * what `kubectl rollout undo` sends back), the name `<set>-<hash>` where the hash is
 * ComputeHash of the template and the collision count, the same hash labels the pods made from it.
 * Pure.
 */
import type { ControllerRevision, DaemonSet } from 'kubernetes-types/apps/v1.js';
import { CONTROLLER_REVISION_HASH_LABEL, newControllerRef } from '../../kube/workloads.js';
import { sortedJson } from '../../util/sortedjson.js';
import { templateHash } from '../deployment/util.js';
import { revisionData, revisionName, type RevisionPlan } from '../statefulset/revision.js';

/** snapshot: a new revision of `ds` numbered `revision`, labelled with the template's labels and its hash. */
export function newDaemonRevision(ds: DaemonSet, revision: number): ControllerRevision {
  const hash = templateHash(ds.spec?.template, ds.status?.collisionCount);
  return {
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: {
      name: revisionName(ds.metadata?.name ?? '', hash),
      namespace: ds.metadata?.namespace,
      labels: { ...ds.spec?.template?.metadata?.labels, [CONTROLLER_REVISION_HASH_LABEL]: hash },
      annotations: { ...ds.metadata?.annotations },
      ownerReferences: [newControllerRef(ds, 'apps/v1', 'DaemonSet')],
    },
    data: revisionData(ds),
    revision,
  };
}

/** Whether a revision restores exactly the set's current template (kube's match). */
export function revisionMatches(ds: DaemonSet, rev: ControllerRevision): boolean {
  return sortedJson(rev.data) === sortedJson(revisionData(ds));
}

/**
 * The current revision of `ds` among its own (oldest first): the newest equal one, renumbered to
 * be the newest of all when it is not (a rollback), or a new one.
 */
export function planDaemonRevision(ds: DaemonSet, owned: readonly ControllerRevision[]): RevisionPlan {
  const next = owned.length ? owned[owned.length - 1]!.revision + 1 : 1;
  const equal = owned.filter((r) => revisionMatches(ds, r));
  const latest = equal[equal.length - 1];
  if (latest && latest === owned[owned.length - 1]) return { kind: 'ready', update: latest };
  if (latest) return { kind: 'renumber', revision: latest, to: next };
  return { kind: 'create', revision: newDaemonRevision(ds, next) };
}

/** The hash a revision's pods carry: its label, else its name's suffix. */
export function revisionHash(rev: ControllerRevision): string {
  const label = rev.metadata?.labels?.[CONTROLLER_REVISION_HASH_LABEL];
  if (label) return label;
  const name = rev.metadata?.name ?? '';
  return name.slice(name.lastIndexOf('-') + 1);
}

/**
 * cleanupHistory: beyond revisionHistoryLimit, the oldest revisions other than the current one
 * go, unless a live pod still carries their hash.
 */
export function historyToDelete(
  ds: DaemonSet,
  owned: readonly ControllerRevision[],
  current: ControllerRevision,
  liveHashes: ReadonlySet<string>,
): ControllerRevision[] {
  const old = owned.filter(
    (r) => r.metadata?.uid !== current.metadata?.uid || r.metadata?.name !== current.metadata?.name,
  );
  let toKill = old.length - (ds.spec?.revisionHistoryLimit ?? 10);
  const out: ControllerRevision[] = [];
  for (const r of old) {
    if (toKill <= 0) break;
    if (liveHashes.has(revisionHash(r))) continue;
    out.push(r);
    toKill--;
  }
  return out;
}
