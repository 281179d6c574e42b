/**
 * Pod templates inside workloads (`spec.template` of Deployments, ReplicaSets, StatefulSets, Jobs):
 * the pod defaults applied to the template, the pod validation reused under the template's field
 * path, and the rules of ValidatePodTemplateSpecForReplicaSet (labels that the selector matches);
 * the StatefulSet/Job form of the same rules (validateTemplateAndSelector).
 */
import type { FieldCause } from '../../util/errors.js';
import { formatLabelSelector, labelSelectorFromObject, matchesLabels, type LabelSelectorObject } from '../selectors.js';
import { objectAt } from './corehelpers.js';
import { forbidden, invalid, notSupported, required, type RenderedValue } from './fielderrors.js';
import { validateAnnotations, validateLabels } from './names.js';
import { applyPodDefaults } from './poddefaults.js';
import { validatePodSpec } from './podvalidation.js';
import { validateLabelSelector } from './selectorvalidation.js';
import type { KubeObject } from './types.js';

/** The template at `spec.template` viewed as a pod (sharing its metadata and spec objects). */
function templateAsPod(obj: KubeObject): KubeObject | undefined {
  const t = objectAt(objectAt(obj, 'spec'), 'template');
  if (!t) return undefined;
  if (!objectAt(t, 'metadata')) t.metadata = {};
  if (!objectAt(t, 'spec')) t.spec = {};
  return { metadata: t.metadata as KubeObject['metadata'], spec: t.spec };
}

/** Pod defaults on `spec.template.spec` (kube defaults every PodTemplateSpec as it defaults pods). */
export function applyTemplateDefaults(obj: KubeObject): void {
  const pod = templateAsPod(obj);
  if (pod) applyPodDefaults(pod);
}

/** Go's `%#v` of a map[string]string (keys sorted, as fmt prints maps). */
function goStringMap(m: Record<string, string> | undefined): RenderedValue {
  const entries = Object.keys(m ?? {}).sort().map((k) => `${JSON.stringify(k)}:${JSON.stringify(m![k])}`);
  return { rendered: `map[string]string{${entries.join(', ')}}` };
}

/** Renames a pod validation cause's field (`spec.x`, `metadata.y`) to where the template holds it. */
function underTemplate(c: FieldCause, prefix: string): FieldCause {
  return c.field ? { ...c, field: `${prefix}.${c.field}` } : c;
}

/**
 * ValidatePodTemplateSpecForReplicaSet/StatefulSet: the template is required, its labels must be
 * selected by the workload's selector, its pod spec valid, and its restartPolicy one of `allowed`
 * (Always for Deployments, ReplicaSets and StatefulSets).
 */
export function validateWorkloadTemplate(obj: KubeObject, allowedRestartPolicies: readonly string[] = ['Always']): FieldCause[] {
  const spec = objectAt(obj, 'spec') ?? {};
  const t = objectAt(spec, 'template');
  if (!t) return [required('spec.template')];
  const out: FieldCause[] = [];
  const meta = (objectAt(t, 'metadata') ?? {}) as KubeObject['metadata'];
  out.push(...validateLabels(meta.labels, 'spec.template.metadata.labels'));
  out.push(...validateAnnotations(meta.annotations, 'spec.template.metadata.annotations'));
  const selector = spec.selector as LabelSelectorObject | undefined;
  if (selector) {
    try {
      const sel = labelSelectorFromObject(selector, { nil: 'nothing', fieldPath: 'spec.selector' });
      if (!matchesLabels(sel, meta.labels)) {
        out.push(invalid('spec.template.metadata.labels', goStringMap(meta.labels), '`selector` does not match template `labels`'));
      }
    } catch {
      // the selector's own validation reports it
    }
  }
  const pod = templateAsPod(obj)!;
  out.push(...validatePodSpec(pod).map((c) => underTemplate(c, 'spec.template')));
  const policy = objectAt(t, 'spec')?.restartPolicy;
  if (typeof policy === 'string' && !allowedRestartPolicies.includes(policy)) {
    out.push(notSupported('spec.template.spec.restartPolicy', policy, allowedRestartPolicies));
  }
  if (objectAt(t, 'spec')?.activeDeadlineSeconds !== undefined) {
    out.push(forbidden('spec.template.spec.activeDeadlineSeconds', 'activeDeadlineSeconds in ReplicaSet is not Supported'));
  }
  return out;
}

/** A workload's spec.selector: required, valid, and not empty (ValidateReplicaSetSpec / ValidateDeploymentSpec). */
export function validateWorkloadSelector(obj: KubeObject): FieldCause[] {
  const sel = objectAt(obj, 'spec')?.selector;
  if (sel === undefined || sel === null) return [required('spec.selector')];
  const out = validateLabelSelector(sel, 'spec.selector');
  const s = sel as LabelSelectorObject;
  if (Object.keys(s.matchLabels ?? {}).length === 0 && (s.matchExpressions ?? []).length === 0) {
    out.push(invalid('spec.selector', JSON.stringify(sel), 'empty selector is invalid for deployment'));
  }
  return out;
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
  const v = objectAt(obj, 'spec')?.[field];
  if (v === undefined || v === null) return [];
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) return [invalid(`spec.${field}`, v as number, 'must be greater than or equal to 0')];
  return [];
}

/** The -o wide cells of a workload: CONTAINERS, IMAGES, SELECTOR (kubectl's layoutContainerCells). */
export function workloadWideCells(obj: KubeObject): [string, string, string] {
  const containers = (objectAt(objectAt(objectAt(obj, 'spec'), 'template'), 'spec')?.containers ?? []) as Array<{ name?: string; image?: string }>;
  const names = containers.map((c) => c.name ?? '').join(',');
  const images = containers.map((c) => c.image ?? '').join(',');
  let selector = '';
  try {
    selector = formatLabelSelector(labelSelectorFromObject(objectAt(obj, 'spec')?.selector as LabelSelectorObject | undefined, { nil: 'nothing' }));
  } catch {
    selector = '<error>';
  }
  return [names, images, selector || '<none>'];
}

type Obj = Record<string, unknown>;

/** Pod defaults applied inside `spec.template` (Kubernetes defaults nested pod specs as it does pods). */
export function defaultPodTemplate(spec: Obj): void {
  const t = objectAt(spec, 'template');
  if (!t) return;
  const asPod: KubeObject = { metadata: {}, spec: objectAt(t, 'spec') ?? {} };
  applyPodDefaults(asPod);
  t.spec = asPod.spec;
}

/**
 * ValidatePodTemplateSpec at Stowage's depth (unless `podSpec: false`: a StatefulSet's is not
 * validated), plus the workload rule that the selector (required; non-empty when
 * `emptySelectorMessage` says why) selects the template's labels.
 */
export function validateTemplateAndSelector(spec: Obj, opts: { emptySelectorMessage?: string; podSpec?: boolean }): FieldCause[] {
  const out: FieldCause[] = [];
  const selector = objectAt(spec, 'selector');
  if (!selector) out.push(required('spec.selector'));
  else {
    const sel = validateLabelSelector(selector, 'spec.selector');
    out.push(...sel);
    const empty = Object.keys(objectAt(selector, 'matchLabels') ?? {}).length === 0 && !(Array.isArray(selector.matchExpressions) && selector.matchExpressions.length > 0);
    if (empty && opts.emptySelectorMessage) out.push(invalid('spec.selector', { rendered: 'empty' }, opts.emptySelectorMessage));
  }
  const t = objectAt(spec, 'template');
  if (!t) {
    out.push(required('spec.template'));
    return out;
  }
  const meta = objectAt(t, 'metadata') ?? {};
  const labels = objectAt(meta, 'labels') as Record<string, string> | undefined;
  out.push(...validateLabels(labels, 'spec.template.metadata.labels'));
  out.push(...validateAnnotations(objectAt(meta, 'annotations') as Record<string, string> | undefined, 'spec.template.metadata.annotations'));
  if (selector && out.length === 0 && !templateSelected(selector, labels)) {
    out.push(invalid('spec.template.metadata.labels', goStringMap(labels), '`selector` does not match template `labels`'));
  }
  if (opts.podSpec !== false) out.push(...validatePodSpec({ metadata: {}, spec: objectAt(t, 'spec') }).map((c) => underTemplate(c, 'spec.template')));
  return out;
}

function templateSelected(selector: Obj, labels: Record<string, string> | undefined): boolean {
  try {
    return matchesLabels(labelSelectorFromObject(selector as LabelSelectorObject), labels);
  } catch {
    return false; // an invalid selector was reported by validateLabelSelector
  }
}
