/**
 * The pod template of a workload (StatefulSet, Job): its defaults and validation, and the rule
 * that a workload's selector must select its own template's labels.
 */
import type { FieldCause } from '../../util/errors.js';
import { labelSelectorFromObject, matchesLabels, type LabelSelectorObject } from '../selectors.js';
import { objectAt } from './corehelpers.js';
import { invalid, required } from './fielderrors.js';
import { validateAnnotations, validateLabels } from './names.js';
import { applyPodDefaults } from './poddefaults.js';
import { validatePodSpec } from './podvalidation.js';
import { validateLabelSelector } from './selectorvalidation.js';
import type { KubeObject } from './types.js';

type Obj = Record<string, unknown>;

/** Pod defaults applied inside `spec.template` (Kubernetes defaults nested pod specs as it does pods). */
export function defaultPodTemplate(spec: Obj): void {
  const t = objectAt(spec, 'template');
  if (!t) return;
  const asPod: KubeObject = { metadata: {}, spec: objectAt(t, 'spec') ?? {} };
  applyPodDefaults(asPod);
  t.spec = asPod.spec;
}

/** The field path of a pod-spec cause as seen from the template at `prefix` (`spec.x` → `<prefix>.spec.x`). */
function underTemplate(c: FieldCause, prefix: string): FieldCause {
  return { ...c, field: c.field ? `${prefix}.${c.field}` : prefix, message: c.message };
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
    out.push(invalid('spec.template.metadata.labels', { rendered: goStringMap(labels ?? {}) }, '`selector` does not match template `labels`'));
  }
  if (opts.podSpec !== false) out.push(...validatePodSpec({ metadata: {}, spec: objectAt(t, 'spec') }).map((c) => underTemplate(c, 'spec.template')));
  return out;
}

/** A label map as Go's %#v renders it in a field error. */
function goStringMap(m: Record<string, string>): string {
  const keys = Object.keys(m).sort();
  return `map[string]string{${keys.map((k) => `${JSON.stringify(k)}:${JSON.stringify(m[k])}`).join(', ')}}`;
}

function templateSelected(selector: Obj, labels: Record<string, string> | undefined): boolean {
  try {
    return matchesLabels(labelSelectorFromObject(selector as LabelSelectorObject), labels);
  } catch {
    return false; // an invalid selector was reported by validateLabelSelector
  }
}
