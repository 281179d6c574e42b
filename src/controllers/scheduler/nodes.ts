/**
 * Node-level filters that do not involve volumes (NodeUnschedulable, TaintToleration, NodeAffinity),
 * so that a FailedScheduling message accounts for every node. A node whose Ready condition is not
 * True is treated as carrying the not-ready NoSchedule taint the node lifecycle controller would add.
 */
import { nodeSelectorTermsMatch } from '../../kube/nodeselector.js';
import { nodeReadyStatus, tolerates } from '../../kube/node.js';
import type { Taint, TopologySelectorTerm } from 'kubernetes-types/core/v1.js';
import { REASONS, TAINT_NOT_READY, TAINT_UNSCHEDULABLE, type Node, type NodeFailure, type Pod } from './types.js';

export function isNodeReady(n: Node): boolean {
  return nodeReadyStatus(n) === 'True';
}

export { tolerates };

function effectiveTaints(n: Node): Taint[] {
  const taints = [...(n.spec?.taints ?? [])];
  if (!isNodeReady(n) && !taints.some((t) => t.key === TAINT_NOT_READY))
    taints.push({ key: TAINT_NOT_READY, effect: 'NoSchedule' });
  return taints;
}

export { nodeSelectorTermsMatch };

/** StorageClass allowedTopologies (v1helper.MatchTopologySelectorTerms): none = everywhere. */
export function topologyTermsMatch(
  terms: readonly TopologySelectorTerm[] | undefined,
  labels: Readonly<Record<string, string>>,
): boolean {
  if (!terms || terms.length === 0) return true;
  return terms.some((t) =>
    (t.matchLabelExpressions ?? []).every((e) => labels[e.key] !== undefined && e.values.includes(labels[e.key]!)),
  );
}

export function podNodeAffinityMatches(p: Pod, n: Node): boolean {
  const labels = n.metadata?.labels ?? {};
  for (const [k, v] of Object.entries(p.spec?.nodeSelector ?? {})) if (labels[k] !== v) return false;
  const req = p.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  return req ? nodeSelectorTermsMatch(req.nodeSelectorTerms ?? [], n) : true;
}

/** The first failing non-volume filter for a pod on a node, in kube-scheduler's plugin order; null = passes. */
export function nodeFilter(p: Pod, n: Node): NodeFailure | null {
  const tolerations = p.spec?.tolerations ?? [];
  if (
    n.spec?.unschedulable &&
    !tolerations.some((t) => tolerates(t, { key: TAINT_UNSCHEDULABLE, effect: 'NoSchedule' }))
  ) {
    return { code: 'UnschedulableAndUnresolvable', reasons: [REASONS.nodeUnschedulable] };
  }
  for (const taint of effectiveTaints(n)) {
    if (taint.effect !== 'NoSchedule' && taint.effect !== 'NoExecute') continue;
    if (tolerations.some((t) => tolerates(t, taint))) continue;
    return {
      code: 'UnschedulableAndUnresolvable',
      reasons: [`node(s) had untolerated taint {${taint.key}: ${taint.value ?? ''}}`],
    };
  }
  if (!podNodeAffinityMatches(p, n)) return { code: 'UnschedulableAndUnresolvable', reasons: [REASONS.nodeAffinity] };
  return null;
}
