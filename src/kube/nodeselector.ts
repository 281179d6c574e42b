/**
 * Node selector matching as Kubernetes' v1helper.MatchNodeSelectorTerms: terms are ORed; within a
 * term every expression and field is ANDed; an empty term matches nothing. Used by the PV
 * controller (volume node affinity) and the scheduler (pod node affinity, volume topology).
 */
import type { Node, NodeSelectorRequirement, NodeSelectorTerm, PersistentVolume } from 'kubernetes-types/core/v1.js';

export function nodeSelectorRequirementMatches(r: NodeSelectorRequirement, value: string | undefined): boolean {
  const vals = r.values ?? [];
  switch (r.operator) {
    case 'In':
      return value !== undefined && vals.includes(value);
    case 'NotIn':
      return value === undefined || !vals.includes(value);
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
    case 'Gt':
    case 'Lt': {
      if (value === undefined || vals.length !== 1) return false;
      const a = Number.parseInt(value, 10);
      const b = Number.parseInt(vals[0] ?? '', 10);
      if (Number.isNaN(a) || Number.isNaN(b)) return false;
      return r.operator === 'Gt' ? a > b : a < b;
    }
    default:
      return false;
  }
}

export function nodeSelectorTermsMatch(terms: readonly NodeSelectorTerm[], n: Node): boolean {
  const labels = n.metadata?.labels ?? {};
  return terms.some((t) => {
    const exprs = t.matchExpressions ?? [];
    const fields = t.matchFields ?? [];
    if (exprs.length === 0 && fields.length === 0) return false;
    return (
      exprs.every((e) => nodeSelectorRequirementMatches(e, labels[e.key])) &&
      fields.every((f) => f.key === 'metadata.name' && nodeSelectorRequirementMatches(f, n.metadata?.name))
    );
  });
}

/** PV node affinity against a node; a volume without affinity admits every node. */
export function volumeNodeAffinityMatches(volume: PersistentVolume, node: Node): boolean {
  const required = volume.spec?.nodeAffinity?.required;
  if (!required) return true;
  return nodeSelectorTermsMatch(required.nodeSelectorTerms ?? [], node);
}
