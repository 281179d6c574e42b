/**
 * ControllerRevisions of a StatefulSet (pkg/controller/history and the set's revision handling):
 * a revision's data is the strategic-merge patch that restores the set's pod template (what
 * `kubectl rollout undo` sends back), its name `<set>-<hash of the data>`, its number one more
 * than the newest. Pure.
 */
import type { ControllerRevision, StatefulSet } from 'kubernetes-types/apps/v1.js';
import type { PodTemplateSpec } from 'kubernetes-types/core/v1.js';
import { CONTROLLER_REVISION_HASH_LABEL, newControllerRef } from '../../kube/workloads.js';
import { sortedJson } from '../../util/sortedjson.js';

/** Kubernetes' rand.SafeEncodeString alphabet: no vowels, no look-alike characters. */
const SAFE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** rand.SafeEncodeString: each character mapped into the safe alphabet by its code. */
export function safeEncodeString(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) out += SAFE_ALPHABET[s.charCodeAt(i) % SAFE_ALPHABET.length];
  return out;
}

/** 32-bit FNV-1a over the UTF-8 bytes of `s`. */
function fnv32a(s: string): number {
  let h = 0x811c9dc5;
  for (const b of Buffer.from(s, 'utf8')) h = Math.imul(h ^ b, 0x01000193) >>> 0;
  return h >>> 0;
}

/** The patch a revision stores: the set's template, replacing whatever template the set has then (a DaemonSet's too). */
export function revisionData(set: {
  readonly spec?: { readonly template?: PodTemplateSpec };
}): Record<string, unknown> {
  return { spec: { template: { $patch: 'replace', ...structuredClone(set.spec?.template ?? {}) } } };
}

/** controller.HashControllerRevision: FNV-1a of the data, then of the collision count, safe-encoded. */
export function hashRevision(data: unknown, collisionCount: number): string {
  return safeEncodeString(String(fnv32a(sortedJson(data) + String(collisionCount))));
}

/** history.ControllerRevisionName: `<parent>-<hash>`, the parent's name cut to fit 253 characters. */
export function revisionName(parent: string, hash: string): string {
  return `${parent.length > 223 ? parent.slice(0, 223) : parent}-${hash}`;
}

/** The template a revision restores. */
export function revisionTemplate(rev: ControllerRevision): PodTemplateSpec {
  const data = rev.data as { spec?: { template?: Record<string, unknown> } } | undefined;
  const { $patch: _replace, ...template } = data?.spec?.template ?? {};
  return template as PodTemplateSpec;
}

/** A new revision of `set` with number `revision` (history.NewControllerRevision). */
export function newRevision(set: StatefulSet, revision: number, collisionCount: number): ControllerRevision {
  const data = revisionData(set);
  const hash = hashRevision(data, collisionCount);
  return {
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: {
      name: revisionName(set.metadata?.name ?? '', hash),
      namespace: set.metadata?.namespace,
      labels: { ...(set.spec?.template?.metadata?.labels ?? {}), [CONTROLLER_REVISION_HASH_LABEL]: hash },
      ownerReferences: [newControllerRef(set, 'apps/v1', 'StatefulSet')],
    },
    data,
    revision,
  };
}

/** Revisions oldest first (history.SortControllerRevisions: by number, then creation, then name). */
export function sortedRevisions(revisions: readonly ControllerRevision[]): ControllerRevision[] {
  return [...revisions].sort(
    (a, b) =>
      a.revision - b.revision ||
      (a.metadata?.creationTimestamp ?? '').localeCompare(b.metadata?.creationTimestamp ?? '') ||
      (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''),
  );
}

export type RevisionPlan =
  /** The update revision exists and is the newest: nothing to write. */
  | { readonly kind: 'ready'; readonly update: ControllerRevision }
  /** An equal older revision becomes the newest (a rollback): its number is raised. */
  | { readonly kind: 'renumber'; readonly revision: ControllerRevision; readonly to: number }
  | { readonly kind: 'create'; readonly revision: ControllerRevision };

/** getStatefulSetRevisions' first half: which revision the set's current template is, and what to write for it. */
export function planUpdateRevision(set: StatefulSet, owned: readonly ControllerRevision[]): RevisionPlan {
  const data = revisionData(set);
  const next = owned.length ? owned[owned.length - 1]!.revision + 1 : 1;
  const text = sortedJson(data);
  const equal = owned.filter((r) => sortedJson(r.data) === text);
  const latest = equal[equal.length - 1];
  if (latest && latest === owned[owned.length - 1]) return { kind: 'ready', update: latest };
  if (latest) return { kind: 'renumber', revision: latest, to: next };
  return { kind: 'create', revision: newRevision(set, next, set.status?.collisionCount ?? 0) };
}

/** The current revision: the one status names, else the update revision (a new set). */
export function currentRevisionOf(
  set: StatefulSet,
  owned: readonly ControllerRevision[],
  update: ControllerRevision,
): ControllerRevision {
  const name = set.status?.currentRevision;
  return owned.find((r) => r.metadata?.name === name) ?? update;
}

/**
 * truncateHistory: revisions neither current, nor the update revision, nor used by a live pod are
 * history; beyond revisionHistoryLimit the oldest of them go.
 */
export function revisionsToDelete(
  set: StatefulSet,
  owned: readonly ControllerRevision[],
  live: ReadonlySet<string>,
): ControllerRevision[] {
  const history = owned.filter((r) => !live.has(r.metadata?.name ?? ''));
  const limit = set.spec?.revisionHistoryLimit ?? 10;
  return history.length > limit ? history.slice(0, history.length - limit) : [];
}
