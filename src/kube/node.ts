/** A Node's readiness and taints as every reader interprets them (kube's nodeutil.GetNodeCondition, v1 Toleration.ToleratesTaint). */
import type { Node, NodeCondition, Taint, Toleration } from 'kubernetes-types/core/v1.js';

export function nodeReadyCondition(n: Node): NodeCondition | undefined {
  return n.status?.conditions?.find((c) => c.type === 'Ready');
}

/** 'True' | 'False' | 'Unknown'; a node that never posted a Ready condition counts as Unknown. */
export function nodeReadyStatus(n: Node): string {
  return nodeReadyCondition(n)?.status ?? 'Unknown';
}

/** v1 Toleration.ToleratesTaint: effect (empty = all), key (empty with Exists = all), value for Equal. */
export function tolerates(t: Toleration, taint: Taint): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  if (t.operator === 'Exists') return !t.key || t.key === taint.key;
  return t.key === taint.key && (t.value ?? '') === (taint.value ?? '');
}
