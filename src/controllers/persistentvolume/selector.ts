/**
 * Private label-selector matcher (metav1.LabelSelectorAsSelector semantics); src/api/selectors.ts
 * had not landed when this was written. A nil selector is handled by callers (it matches all).
 */
import type { LabelSelector } from 'kubernetes-types/meta/v1.js';

export class SelectorError extends Error {}

export type LabelMatcher = (labels: Readonly<Record<string, string>> | undefined) => boolean;

/** Compile a selector. An empty selector ({}) matches everything, as in Kubernetes. */
export function compileLabelSelector(sel: LabelSelector): LabelMatcher {
  const reqs: Array<(l: Readonly<Record<string, string>>) => boolean> = [];
  for (const [k, v] of Object.entries(sel.matchLabels ?? {})) reqs.push((l) => l[k] === v);
  for (const e of sel.matchExpressions ?? []) {
    const values = e.values ?? [];
    switch (e.operator) {
      case 'In':
        if (values.length === 0) throw new SelectorError(`values: Required value: must be specified when operator is In`);
        reqs.push((l) => e.key in l && values.includes(l[e.key] ?? ''));
        break;
      case 'NotIn':
        if (values.length === 0) throw new SelectorError(`values: Required value: must be specified when operator is NotIn`);
        reqs.push((l) => !(e.key in l) || !values.includes(l[e.key] ?? ''));
        break;
      case 'Exists':
        reqs.push((l) => e.key in l);
        break;
      case 'DoesNotExist':
        reqs.push((l) => !(e.key in l));
        break;
      default:
        throw new SelectorError(`${e.operator} is not a valid label selector operator`);
    }
  }
  return (labels) => {
    const l = labels ?? {};
    return reqs.every((r) => r(l));
  };
}
