/**
 * PodDisruptionBudget arithmetic shared by the disruption controller (which writes the status) and
 * the eviction subresource (which spends it): which pods count as healthy, and the status a budget
 * has over the pods it selects. Pure; kube's pkg/controller/disruption rules.
 */
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { PodDisruptionBudget, PodDisruptionBudgetStatus } from 'kubernetes-types/policy/v1.js';

import { scaledIntOrPercent, type IntOrPercent } from './intorpercent.js';
import { isPodReady } from './workloads.js';

/** A pod counts as healthy when it is not being deleted and its Ready condition is True. */
export function isPodHealthy(p: Pod): boolean {
  return !p.metadata?.deletionTimestamp && isPodReady(p);
}

/** An int-or-percent against `total` (percentages rounded up, as intstr.GetScaledValueFromIntOrPercent with roundUp). */
export function scaled(v: IntOrPercent, total: number): number {
  return scaledIntOrPercent(v, total, true);
}

/** Pods evicted but not yet gone stay out of currentHealthy this long (kube's DeletionTimeout). */
export const DISRUPTED_POD_TIMEOUT_MS = 2 * 60 * 1000;

/**
 * The status a budget has over `pods` (those its selector matches in its namespace), at `nowMs`.
 * Expected pods are the matching pods (Stowage has no workload controllers whose scale kube would read).
 */
export function budgetStatus(
  pdb: PodDisruptionBudget,
  pods: readonly Pod[],
  nowMs: number,
  nowIso: string,
): PodDisruptionBudgetStatus {
  const spec = pdb.spec ?? {};
  const names = new Set(pods.map((p) => p.metadata?.name ?? ''));
  // A disrupted pod is forgotten once it is gone or its eviction is older than the timeout.
  const disruptedPods: Record<string, string> = {};
  for (const [name, at] of Object.entries(pdb.status?.disruptedPods ?? {})) {
    const pod = pods.find((p) => p.metadata?.name === name);
    if (!names.has(name) || pod?.metadata?.deletionTimestamp) continue;
    if (Date.parse(at) + DISRUPTED_POD_TIMEOUT_MS <= nowMs) continue;
    disruptedPods[name] = at;
  }
  const expectedPods = pods.length;
  const currentHealthy = pods.filter((p) => isPodHealthy(p) && !((p.metadata?.name ?? '') in disruptedPods)).length;
  let desiredHealthy = 0;
  if (spec.maxUnavailable !== undefined)
    desiredHealthy = Math.max(0, expectedPods - scaled(spec.maxUnavailable, expectedPods));
  else if (spec.minAvailable !== undefined) desiredHealthy = scaled(spec.minAvailable, expectedPods);
  const disruptionsAllowed = Math.max(0, currentHealthy - desiredHealthy);
  const allowed = disruptionsAllowed > 0;
  const prev = (pdb.status?.conditions ?? []).find((c) => c.type === 'DisruptionAllowed');
  const status = allowed ? 'True' : 'False';
  const reason = allowed ? 'SufficientPods' : 'InsufficientPods';
  return {
    observedGeneration: pdb.metadata?.generation ?? 0,
    ...(Object.keys(disruptedPods).length ? { disruptedPods } : {}),
    disruptionsAllowed,
    currentHealthy,
    desiredHealthy,
    expectedPods,
    conditions: [
      {
        type: 'DisruptionAllowed',
        status,
        reason,
        message: '',
        observedGeneration: pdb.metadata?.generation ?? 0,
        lastTransitionTime: prev && prev.status === status ? prev.lastTransitionTime : nowIso,
      },
    ],
  };
}
