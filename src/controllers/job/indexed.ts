/**
 * Indexed Jobs (completionMode: Indexed): each pod carries its completion index (annotation and,
 * 1.28+, label `batch.kubernetes.io/job-completion-index`, env JOB_COMPLETION_INDEX, hostname
 * `<job>-<index>`); the Job completes once every index in [0, completions) has succeeded, listed
 * in status.completedIndexes as intervals ("1,3-5"). Pure.
 */
import type { Pod } from 'kubernetes-types/core/v1.js';

export const JOB_COMPLETION_INDEX = 'batch.kubernetes.io/job-completion-index';
/** With backoffLimitPerIndex: how many pods of the pod's index failed before it. */
export const JOB_INDEX_FAILURE_COUNT = 'batch.kubernetes.io/job-index-failure-count';

/** The failures of the pod's index before the pod (0 when not annotated). */
export function indexFailureCount(pod: Pod): number {
  const n = Number(pod.metadata?.annotations?.[JOB_INDEX_FAILURE_COUNT] ?? 0);
  return Number.isInteger(n) && n >= 0 ? n : 0;
}

/** The pod's completion index, or undefined when it has none (or a malformed one). */
export function completionIndex(pod: Pod): number | undefined {
  const v = pod.metadata?.annotations?.[JOB_COMPLETION_INDEX];
  if (v === undefined || !/^(0|[1-9][0-9]*)$/.test(v)) return undefined;
  return Number(v);
}

/** status.completedIndexes → the set of indexes ("1,3-5" → {1,3,4,5}); malformed parts are ignored. */
export function parseIndexes(text: string | undefined): Set<number> {
  const out = new Set<number>();
  for (const part of (text ?? '').split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (!m) continue;
    const from = Number(m[1]);
    const to = m[2] === undefined ? from : Number(m[2]);
    for (let i = from; i <= to && i - from < 1_000_000; i++) out.add(i);
  }
  return out;
}

/** The set as kube writes completedIndexes: sorted, consecutive runs of 3+ as "a-b", others listed. */
export function formatIndexes(indexes: ReadonlySet<number>): string {
  const sorted = [...indexes].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length;) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    if (j === i) parts.push(String(sorted[i]));
    else if (j === i + 1) parts.push(String(sorted[i]), String(sorted[j]));
    else parts.push(`${sorted[i]}-${sorted[j]}`);
    i = j + 1;
  }
  return parts.join(',');
}

/** The lowest `count` indexes below `completions` that neither succeeded nor have a pod. */
export function indexesToCreate(
  completions: number,
  completed: ReadonlySet<number>,
  taken: ReadonlySet<number>,
  count: number,
): number[] {
  const out: number[] = [];
  for (let i = 0; i < completions && out.length < count; i++) if (!completed.has(i) && !taken.has(i)) out.push(i);
  return out;
}
