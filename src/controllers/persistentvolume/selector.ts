/** Claim label selectors through the shared matcher; a nil selector is handled by callers (matches all). */
import type { LabelSelector } from 'kubernetes-types/meta/v1.js';
import { labelSelectorFromObject, matchesLabels } from '../../kube/selectors.js';

export type LabelMatcher = (labels: Readonly<Record<string, string>> | undefined) => boolean;

/** metav1.LabelSelectorAsSelector; `{}` matches everything; invalid selectors throw InvalidError. */
export function compileLabelSelector(sel: LabelSelector): LabelMatcher {
  const s = labelSelectorFromObject(sel, { nil: 'everything', fieldPath: 'spec.selector' });
  return (labels) => matchesLabels(s, labels);
}
