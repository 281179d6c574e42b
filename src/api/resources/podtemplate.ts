/**
 * Pod templates inside workloads (`spec.template` of Deployments, ReplicaSets, StatefulSets, Jobs):
 * the pod defaults applied to the template, and kube's per-kind rules for the selector and the
 * template (ValidatePodTemplateSpecForReplicaSet/StatefulSet, validateJobSpec) as one function.
 */
import type { FieldCause } from '../../util/errors.js';
import { labelSelectorFromObject, matchesLabels, type LabelSelectorObject } from '../../kube/selectors.js';
import { objectAt } from './corehelpers.js';
import { forbidden, invalid, nonNegativeField, notSupported, required, type RenderedValue } from './fielderrors.js';
import { validateAnnotations, validateLabels } from './names.js';
import { applyPodDefaults } from './poddefaults.js';
import { validatePodSpec } from './podvalidation.js';
import { validateLabelSelector } from './selectorvalidation.js';
import type { KubeObject } from './types.js';

type Obj = Record<string, unknown>;

/** Pod defaults on `spec.template.spec` (kube defaults every PodTemplateSpec as it defaults pods). */
export function applyTemplateDefaults(spec: Obj): void {
  const t = objectAt(spec, 'template');
  if (!t) return;
  const asPod: KubeObject = { metadata: {}, spec: objectAt(t, 'spec') ?? {} };
  applyPodDefaults(asPod);
  t.spec = asPod.spec;
}

/** Go's `%#v` of a map[string]string (keys sorted, as fmt prints maps). */
function goStringMap(m: Record<string, string> | undefined): RenderedValue {
  const entries = Object.keys(m ?? {})
    .sort()
    .map((k) => `${JSON.stringify(k)}:${JSON.stringify(m![k])}`);
  return { rendered: `map[string]string{${entries.join(', ')}}` };
}

/** Renames a pod validation cause's field (`spec.x`, `metadata.y`) to where the template holds it. */
function underTemplate(c: FieldCause, prefix: string): FieldCause {
  return c.field ? { ...c, field: `${prefix}.${c.field}` } : c;
}

/** How one workload kind validates its selector and pod template (kube's per-kind ValidatePodTemplateSpecFor*). */
export interface WorkloadTemplateRules {
  /** Invalid-value detail for a selector selecting everything; Jobs allow one. */
  emptySelectorMessage?: string;
  /** Field path of the template's label validation (StatefulSets: `spec.template.labels`, as upstream). */
  labelsField: string;
  /** Whether the template's pod spec is validated up front (not a StatefulSet's: its pods are). */
  podSpec: boolean;
  restartPolicies: readonly string[];
  /** Forbidden detail for a template activeDeadlineSeconds; undefined where it is allowed (Jobs). */
  activeDeadlineForbidden?: string;
}

/** ValidateReplicaSetSpec / ValidateDeploymentSpec (a Deployment is checked as its ReplicaSets are). */
export const REPLICASET_TEMPLATE_RULES: WorkloadTemplateRules = {
  emptySelectorMessage: 'empty selector is invalid for deployment',
  labelsField: 'spec.template.metadata.labels',
  podSpec: true,
  restartPolicies: ['Always'],
  activeDeadlineForbidden: 'activeDeadlineSeconds in ReplicaSet is not Supported',
};

/** ValidateStatefulSetSpec. */
export const STATEFULSET_TEMPLATE_RULES: WorkloadTemplateRules = {
  emptySelectorMessage: 'empty selector is invalid for statefulset',
  labelsField: 'spec.template.labels',
  podSpec: false,
  restartPolicies: ['Always'],
  activeDeadlineForbidden: 'activeDeadlineSeconds in StatefulSet is not Supported',
};

/** validateJobSpec. */
export const JOB_TEMPLATE_RULES: WorkloadTemplateRules = {
  labelsField: 'spec.template.metadata.labels',
  podSpec: true,
  restartPolicies: ['OnFailure', 'Never'],
};

/** Go's `%#v` of an empty LabelSelector (the value kube reports for it). */
function emptySelectorValue(sel: Obj): RenderedValue {
  const labels = sel.matchLabels ? 'map[string]string{}' : 'map[string]string(nil)';
  const exprs = Array.isArray(sel.matchExpressions)
    ? '[]v1.LabelSelectorRequirement{}'
    : '[]v1.LabelSelectorRequirement(nil)';
  return { rendered: `v1.LabelSelector{MatchLabels:${labels}, MatchExpressions:${exprs}}` };
}

/**
 * A workload's spec.selector and spec.template under its kind's rules: the selector required and
 * valid (and non-empty where the kind says so), the template's labels selected by it, its metadata
 * and (per kind) pod spec valid, its restartPolicy one the kind allows, activeDeadlineSeconds
 * forbidden where the kind forbids it.
 */
export function validateWorkloadTemplate(spec: Obj, rules: WorkloadTemplateRules): FieldCause[] {
  const out: FieldCause[] = [];
  const selector = objectAt(spec, 'selector');
  if (!selector) out.push(required('spec.selector'));
  else {
    out.push(...validateLabelSelector(selector, 'spec.selector'));
    const empty =
      Object.keys(objectAt(selector, 'matchLabels') ?? {}).length === 0 &&
      !(Array.isArray(selector.matchExpressions) && selector.matchExpressions.length > 0);
    if (empty && rules.emptySelectorMessage)
      out.push(invalid('spec.selector', emptySelectorValue(selector), rules.emptySelectorMessage));
  }
  const t = objectAt(spec, 'template');
  if (!t) {
    out.push(required('spec.template'));
    return out;
  }
  const meta = objectAt(t, 'metadata') ?? {};
  const labels = objectAt(meta, 'labels') as Record<string, string> | undefined;
  if (selector && out.length === 0 && !templateSelected(selector, labels)) {
    out.push(
      invalid('spec.template.metadata.labels', goStringMap(labels), '`selector` does not match template `labels`'),
    );
  }
  out.push(...validateLabels(labels, rules.labelsField));
  out.push(
    ...validateAnnotations(
      objectAt(meta, 'annotations') as Record<string, string> | undefined,
      'spec.template.metadata.annotations',
    ),
  );
  const podSpec = objectAt(t, 'spec') ?? {};
  if (rules.podSpec)
    out.push(...validatePodSpec({ metadata: {}, spec: podSpec }).map((c) => underTemplate(c, 'spec.template')));
  const policy = podSpec.restartPolicy;
  if (policy !== undefined && !rules.restartPolicies.includes(policy as string)) {
    out.push(notSupported('spec.template.spec.restartPolicy', String(policy), rules.restartPolicies));
  }
  if (
    rules.activeDeadlineForbidden &&
    podSpec.activeDeadlineSeconds !== undefined &&
    podSpec.activeDeadlineSeconds !== null
  ) {
    out.push(forbidden('spec.template.spec.activeDeadlineSeconds', rules.activeDeadlineForbidden));
  }
  return out;
}

function templateSelected(selector: Obj, labels: Record<string, string> | undefined): boolean {
  try {
    return matchesLabels(labelSelectorFromObject(selector as LabelSelectorObject), labels);
  } catch {
    return false; // an invalid selector was reported by validateLabelSelector
  }
}

/** apps/v1 makes spec.selector immutable (ValidateDeploymentUpdate/ValidateReplicaSetUpdate). */
export function validateSelectorImmutable(obj: KubeObject, old: KubeObject): FieldCause[] {
  const a = JSON.stringify(objectAt(obj, 'spec')?.selector ?? null);
  const b = JSON.stringify(objectAt(old, 'spec')?.selector ?? null);
  if (a === b) return [];
  return [invalid('spec.selector', JSON.stringify(objectAt(obj, 'spec')?.selector ?? null), 'field is immutable')];
}

/** ValidateNonnegativeField for an integer field of spec. */
export function nonNegativeInt(obj: KubeObject, field: string): FieldCause[] {
  return nonNegativeField(objectAt(obj, 'spec')?.[field], `spec.${field}`);
}
