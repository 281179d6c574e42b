/**
 * The TTL-after-finished controller's decision (pkg/controller/ttlafterfinished): a Job with
 * ttlSecondsAfterFinished is deleted that many seconds after it finished (the time of its
 * Complete or Failed condition). Pure.
 */
import type { Job } from 'kubernetes-types/batch/v1.js';

export type TtlDecision =
  { readonly kind: 'none' } | { readonly kind: 'delete' } | { readonly kind: 'wait'; readonly ms: number };

/** When the Job finished (ms since epoch), or undefined while it runs. */
export function finishedAt(job: Job): number | undefined {
  const c = (job.status?.conditions ?? []).find(
    (x) => (x.type === 'Complete' || x.type === 'Failed') && x.status === 'True',
  );
  if (!c) return undefined;
  const t = Date.parse(c.lastTransitionTime ?? '');
  return Number.isNaN(t) ? undefined : t;
}

export function decideTtl(job: Job, now: number): TtlDecision {
  const ttl = job.spec?.ttlSecondsAfterFinished;
  if (ttl === undefined || ttl === null || job.metadata?.deletionTimestamp) return { kind: 'none' };
  const at = finishedAt(job);
  if (at === undefined) return { kind: 'none' };
  const left = at + ttl * 1000 - now;
  return left <= 0 ? { kind: 'delete' } : { kind: 'wait', ms: left };
}
