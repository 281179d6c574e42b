/**
 * Deployment arithmetic of kube's pkg/controller/deployment/util: the pod-template-hash and
 * ReplicaSet names, revisions and the annotations copied to ReplicaSets, maxSurge/maxUnavailable
 * against the desired replicas, and replica counts over a set of ReplicaSets. Pure.
 */
import type { Deployment, ReplicaSet } from 'kubernetes-types/apps/v1.js';
import type { PodTemplateSpec } from 'kubernetes-types/core/v1.js';
import { scaledIntOrPercent } from '../../kube/intorpercent.js';
import { sortedJson } from '../../util/sortedjson.js';
import { safeEncodeString } from '../statefulset/revision.js';
import { semanticTemplate } from './semantic.js';

export const POD_TEMPLATE_HASH_LABEL = 'pod-template-hash';
export const REVISION_ANNOTATION = 'deployment.kubernetes.io/revision';
export const REVISION_HISTORY_ANNOTATION = 'deployment.kubernetes.io/revision-history';
export const DESIRED_REPLICAS_ANNOTATION = 'deployment.kubernetes.io/desired-replicas';
export const MAX_REPLICAS_ANNOTATION = 'deployment.kubernetes.io/max-replicas';
/** Annotations of a Deployment never copied to its ReplicaSets (kube's annotationsToSkip). */
const ANNOTATIONS_TO_SKIP = new Set([
  'kubectl.kubernetes.io/last-applied-configuration',
  REVISION_ANNOTATION,
  REVISION_HISTORY_ANNOTATION,
  DESIRED_REPLICAS_ANNOTATION,
  MAX_REPLICAS_ANNOTATION,
  'deprecated.deployment.rollback.to',
]);

/** FNV-32a over bytes. */
function fnv32a(bytes: Uint8Array): number {
  let h = 0x811c9dc5;
  for (const b of bytes) h = Math.imul(h ^ b, 0x01000193) >>> 0;
  return h >>> 0;
}

/**
 * controller.ComputeHash: FNV-32a of the template and then, when set, of the collision count as
 * kube writes it (8 bytes, the uint32 little-endian first), its decimal digits safe-encoded — the
 * `pod-template-hash` label and ReplicaSet suffix. The template is hashed in its semantic form
 * (./semantic.ts) so spellings kube's Go structs cannot tell apart hash equally.
 */
export function templateHash(template: PodTemplateSpec | undefined, collisionCount?: number): string {
  const parts = [Buffer.from(sortedJson(semanticTemplate(template)), 'utf8')];
  if (collisionCount !== undefined) {
    const count = Buffer.alloc(8);
    count.writeUInt32LE(collisionCount >>> 0, 0);
    parts.push(count);
  }
  return safeEncodeString(String(fnv32a(Buffer.concat(parts))));
}

function withoutHash(t: PodTemplateSpec | undefined): PodTemplateSpec {
  const c = structuredClone(t ?? {});
  if (c.metadata?.labels) delete c.metadata.labels[POD_TEMPLATE_HASH_LABEL];
  return c;
}

/** EqualIgnoreHash: two templates semantically equal (apiequality.Semantic) but for the pod-template-hash label. */
export function templatesEqualIgnoringHash(a: PodTemplateSpec | undefined, b: PodTemplateSpec | undefined): boolean {
  return sortedJson(semanticTemplate(withoutHash(a))) === sortedJson(semanticTemplate(withoutHash(b)));
}

export function revisionOf(o: { metadata?: { annotations?: Record<string, string> } }): number {
  const n = Number(o.metadata?.annotations?.[REVISION_ANNOTATION] ?? 0);
  return Number.isFinite(n) ? n : 0;
}

export function maxRevision(rss: readonly ReplicaSet[]): number {
  return rss.reduce((m, rs) => Math.max(m, revisionOf(rs)), 0);
}

export const replicasOf = (o: { spec?: { replicas?: number } }): number => o.spec?.replicas ?? 0;

/** ResolveFenceposts: maxSurge rounded up, maxUnavailable rounded down; both 0 means one unavailable. */
export function fenceposts(d: Deployment): { surge: number; unavailable: number } {
  const ru = d.spec?.strategy?.rollingUpdate;
  const desired = replicasOf(d);
  const surge = scaledIntOrPercent(ru?.maxSurge, desired, true);
  let unavailable = scaledIntOrPercent(ru?.maxUnavailable, desired, false);
  if (surge === 0 && unavailable === 0) unavailable = 1;
  return { surge, unavailable };
}

const isRolling = (d: Deployment): boolean => (d.spec?.strategy?.type ?? 'RollingUpdate') === 'RollingUpdate';

/** MaxUnavailable: 0 for Recreate or no replicas, never more than the replicas. */
export function maxUnavailable(d: Deployment): number {
  if (!isRolling(d) || replicasOf(d) === 0) return 0;
  return Math.min(fenceposts(d).unavailable, replicasOf(d));
}

export function maxSurge(d: Deployment): number {
  return isRolling(d) ? fenceposts(d).surge : 0;
}

/** GetReplicaCountForReplicaSets: the sum of spec.replicas. */
export const specReplicas = (rss: readonly ReplicaSet[]): number => rss.reduce((n, rs) => n + replicasOf(rs), 0);
/** GetActualReplicaCountForReplicaSets: the sum of status.replicas. */
export const statusReplicas = (rss: readonly ReplicaSet[]): number =>
  rss.reduce((n, rs) => n + (rs.status?.replicas ?? 0), 0);
export const readyReplicas = (rss: readonly ReplicaSet[]): number =>
  rss.reduce((n, rs) => n + (rs.status?.readyReplicas ?? 0), 0);
export const availableReplicas = (rss: readonly ReplicaSet[]): number =>
  rss.reduce((n, rs) => n + (rs.status?.availableReplicas ?? 0), 0);

/** The annotations a Deployment gives its ReplicaSet: its own (minus the skipped ones), revision, desired and max replicas. */
export function replicaSetAnnotations(
  d: Deployment,
  rs: ReplicaSet | undefined,
  revision: number,
): Record<string, string> {
  const out: Record<string, string> = { ...(rs?.metadata?.annotations ?? {}) };
  for (const [k, v] of Object.entries(d.metadata?.annotations ?? {})) if (!ANNOTATIONS_TO_SKIP.has(k)) out[k] = v;
  const old = rs?.metadata?.annotations?.[REVISION_ANNOTATION];
  if (!old || Number(old) < revision) {
    out[REVISION_ANNOTATION] = String(revision);
    // A ReplicaSet brought back by a rollback keeps the revisions it had (kube's revision-history).
    if (old)
      out[REVISION_HISTORY_ANNOTATION] = out[REVISION_HISTORY_ANNOTATION]
        ? `${out[REVISION_HISTORY_ANNOTATION]},${old}`
        : old;
  }
  out[DESIRED_REPLICAS_ANNOTATION] = String(replicasOf(d));
  out[MAX_REPLICAS_ANNOTATION] = String(replicasOf(d) + maxSurge(d));
  return out;
}

const created = (rs: ReplicaSet): number => Date.parse(rs.metadata?.creationTimestamp ?? '') || 0;
/** ReplicaSetsByCreationTimestamp: oldest first, names breaking ties. */
export function oldestFirst(rss: readonly ReplicaSet[]): ReplicaSet[] {
  return [...rss].sort(
    (a, b) => created(a) - created(b) || (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''),
  );
}
