/** policy/v1 PodDisruptionBudget: validation as kube's ValidatePodDisruptionBudget, kubectl's columns. */
import type { FieldCause } from '../../util/errors.js';
import { objectAt } from './corehelpers.js';
import { baseResourceDef } from './common.js';
import { invalid, notSupported } from './fielderrors.js';
import { nameIsDNSSubdomain, validateObjectMeta, validateObjectMetaUpdate } from './names.js';
import { age, ageColumn, column, nameColumn } from './printing.js';
import { validateLabelSelector } from './selectorvalidation.js';
import { labelSelectorFromObject, matchesLabels, type LabelSelectorObject } from '../../kube/selectors.js';
import type { KubeObject } from './types.js';

const EVICTION_POLICIES = ['AlwaysAllow', 'IfHealthyBudget'] as const;

/** ValidatePositiveIntOrPercent, and (unless `over100`) at most 100% (IsNotMoreThan100Percent). */
export function validateIntOrPercent(v: unknown, field: string, opts: { over100?: boolean } = {}): FieldCause[] {
  if (v === undefined || v === null) return [];
  if (typeof v === 'number')
    return Number.isInteger(v) && v >= 0 ? [] : [invalid(field, v, 'must be greater than or equal to 0')];
  if (typeof v !== 'string') return [invalid(field, JSON.stringify(v), "must be an integer or percentage (e.g '5%')")];
  const m = /^(\d+)%$/.exec(v);
  if (!m)
    return [
      invalid(
        field,
        v,
        "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
      ),
    ];
  return !opts.over100 && Number(m[1]) > 100 ? [invalid(field, v, 'must not be greater than 100%')] : [];
}

function validateSpec(pdb: KubeObject): FieldCause[] {
  const spec = objectAt(pdb, 'spec') ?? {};
  const out: FieldCause[] = [];
  if (
    spec.minAvailable !== undefined &&
    spec.minAvailable !== null &&
    spec.maxUnavailable !== undefined &&
    spec.maxUnavailable !== null
  ) {
    out.push(invalid('spec', JSON.stringify(spec), 'minAvailable and maxUnavailable cannot be both set'));
  }
  out.push(
    ...validateIntOrPercent(spec.minAvailable, 'spec.minAvailable'),
    ...validateIntOrPercent(spec.maxUnavailable, 'spec.maxUnavailable'),
  );
  if (spec.selector !== undefined && spec.selector !== null)
    out.push(...validateLabelSelector(spec.selector, 'spec.selector'));
  const policy = spec.unhealthyPodEvictionPolicy;
  if (
    policy !== undefined &&
    policy !== null &&
    !EVICTION_POLICIES.includes(policy as (typeof EVICTION_POLICIES)[number])
  ) {
    out.push(notSupported('spec.unhealthyPodEvictionPolicy', String(policy), EVICTION_POLICIES));
  }
  return out;
}

/** Whether a budget selects a pod of its namespace (policy/v1: an empty selector selects all; none selects none). */
export function budgetSelects(pdb: KubeObject, pod: KubeObject): boolean {
  if (pdb.metadata.namespace !== pod.metadata.namespace) return false;
  const sel = objectAt(pdb, 'spec')?.selector as LabelSelectorObject | null | undefined;
  return matchesLabels(
    labelSelectorFromObject(sel, { nil: 'nothing', fieldPath: 'spec.selector' }),
    pod.metadata.labels,
  );
}

const display = (v: unknown): string => (v === undefined || v === null ? 'N/A' : String(v));

export const podDisruptionBudgetResource = baseResourceDef({
  group: 'policy',
  version: 'v1',
  kind: 'PodDisruptionBudget',
  plural: 'poddisruptionbudgets',
  namespaced: true,
  hasStatus: true,
  shortNames: ['pdb'],
  columns: [
    nameColumn(),
    column(
      'Min Available',
      'The minimum number of pods that must be available, either as an absolute number or a percentage.',
    ),
    column(
      'Max Unavailable',
      'The maximum number of pods that may be unavailable, either as an absolute number or a percentage.',
    ),
    column('Allowed Disruptions', 'Calculated number of pods that may be disrupted at this time.', { type: 'integer' }),
    ageColumn(),
  ],
  row: (o, now) => {
    const spec = objectAt(o, 'spec') ?? {};
    return [
      o.metadata.name ?? '',
      display(spec.minAvailable),
      display(spec.maxUnavailable),
      Number(objectAt(o, 'status')?.disruptionsAllowed ?? 0),
      age(o, now),
    ];
  },
  prepareForCreate(o) {
    // The disruption controller computes the status; a created budget starts from zero.
    o.status = { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 };
    o.metadata.generation = 1; // kube's PDB strategy tracks spec changes in generation
  },
  validateCreate: (o) => [
    ...validateObjectMeta(o.metadata, { namespaced: true, nameFn: nameIsDNSSubdomain }),
    ...validateSpec(o),
  ],
  validateUpdate: (o, old) => [...validateObjectMetaUpdate(o.metadata, old.metadata), ...validateSpec(o)],
  validateStatusUpdate: (o, old) => validateObjectMetaUpdate(o.metadata, old.metadata),
});
