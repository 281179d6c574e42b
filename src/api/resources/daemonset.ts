/** apps/v1 DaemonSet: defaults and validation as kube's apps strategy and validation, kubectl's columns. */
import type { FieldCause } from '../../util/errors.js';
import { objectAt } from './corehelpers.js';
import { jsonEqual } from '../../util/jsonequal.js';
import { baseResourceDef } from './common.js';
import { invalid, nonNegativeField, notSupported, required } from './fielderrors.js';
import { nameIsDNSSubdomain, validateObjectMeta, validateObjectMetaUpdate } from './names.js';
import { validateIntOrPercent } from './poddisruptionbudget.js';
import {
  applyTemplateDefaults,
  nonNegativeInt,
  validateSelectorImmutable,
  validateWorkloadTemplate,
  type WorkloadTemplateRules,
} from './podtemplate.js';
import { age, ageColumn, column, fieldDoc, nameColumn } from './printing.js';
import { containersAndImages, selectorCell, wideWorkloadColumns } from './workloadprinting.js';
import type { KubeObject } from './types.js';

type Obj = Record<string, unknown>;
const num = (v: unknown): number => (typeof v === 'number' ? v : 0);

export const DAEMONSET_UPDATE_STRATEGIES = ['RollingUpdate', 'OnDelete'] as const;

/**
 * apps/v1 stores the internal spec.templateGeneration in this annotation: 1 at creation, one more
 * on every template change; the controller labels pods with it (pod-template-generation).
 */
export const TEMPLATE_GENERATION_ANNOTATION = 'deprecated.daemonset.template.generation';

/** ValidateDaemonSetSpec's selector and template rules. */
const DAEMONSET_TEMPLATE_RULES: WorkloadTemplateRules = {
  emptySelectorMessage: 'empty selector is invalid for daemonset',
  labelsField: 'spec.template.metadata.labels',
  podSpec: true,
  restartPolicies: ['Always'],
  activeDeadlineForbidden: 'activeDeadlineSeconds in DaemonSet is not Supported',
};

/** apps/v1 SetDefaults_DaemonSet and the template's pod defaults. */
function defaults(o: KubeObject): void {
  const spec = (objectAt(o, 'spec') ?? (o.spec = {})) as Obj;
  const strategy = (objectAt(spec, 'updateStrategy') ?? (spec.updateStrategy = {})) as Obj;
  if (!strategy.type) strategy.type = 'RollingUpdate';
  if (strategy.type === 'RollingUpdate') {
    const ru = (objectAt(strategy, 'rollingUpdate') ?? (strategy.rollingUpdate = {})) as Obj;
    ru.maxUnavailable ??= 1;
    ru.maxSurge ??= 0;
  }
  spec.revisionHistoryLimit ??= 10;
  applyTemplateDefaults(spec);
}

/** getIntOrPercentValue: the number, or the percentage's number. */
function intOrPercentValue(v: unknown): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'string') return Number.parseInt(v, 10) || 0;
  return 0;
}

/** ValidateDaemonSetUpdateStrategy and ValidateRollingUpdateDaemonSet. */
function validateStrategy(spec: Obj): FieldCause[] {
  const strategy = objectAt(spec, 'updateStrategy') ?? {};
  switch (strategy.type) {
    case 'OnDelete':
      return [];
    case 'RollingUpdate': {
      const ru = objectAt(strategy, 'rollingUpdate');
      if (!ru) return [required('spec.updateStrategy.rollingUpdate')];
      const out = [
        ...validateIntOrPercent(ru.maxUnavailable, 'spec.updateStrategy.rollingUpdate.maxUnavailable'),
        ...validateIntOrPercent(ru.maxSurge, 'spec.updateStrategy.rollingUpdate.maxSurge'),
      ];
      const hasUnavailable = intOrPercentValue(ru.maxUnavailable) !== 0;
      const hasSurge = intOrPercentValue(ru.maxSurge) !== 0;
      if (hasUnavailable && hasSurge) {
        out.push(
          invalid(
            'spec.updateStrategy.rollingUpdate.maxSurge',
            ru.maxSurge as number | string,
            'may not be set when maxUnavailable is non-zero',
          ),
        );
      } else if (!hasUnavailable && !hasSurge) {
        out.push(required('spec.updateStrategy.rollingUpdate.maxUnavailable', 'cannot be 0 when maxSurge is 0'));
      }
      return out;
    }
    default:
      return [notSupported('spec.updateStrategy', String(strategy.type ?? ''), DAEMONSET_UPDATE_STRATEGIES)];
  }
}

function validateSpec(o: KubeObject): FieldCause[] {
  const spec = objectAt(o, 'spec') ?? {};
  return [
    ...validateWorkloadTemplate(spec, DAEMONSET_TEMPLATE_RULES),
    ...nonNegativeInt(o, 'minReadySeconds'),
    ...validateStrategy(spec),
    ...nonNegativeInt(o, 'revisionHistoryLimit'),
  ];
}

const STATUS_COUNTS = [
  'currentNumberScheduled',
  'numberMisscheduled',
  'desiredNumberScheduled',
  'numberReady',
  'observedGeneration',
  'updatedNumberScheduled',
  'numberAvailable',
  'numberUnavailable',
  'collisionCount',
] as const;

/** ValidateDaemonSetStatus: every count non-negative. */
function validateStatus(o: KubeObject): FieldCause[] {
  const status = objectAt(o, 'status') ?? {};
  return STATUS_COUNTS.flatMap((k) => nonNegativeField(status[k], `status.${k}`));
}

/** labels.FormatLabels of the template's nodeSelector: `k=v,…` sorted by key, `<none>` when empty. */
function nodeSelectorCell(o: KubeObject): string {
  const sel = (objectAt(objectAt(objectAt(o, 'spec'), 'template'), 'spec')?.nodeSelector ?? {}) as Record<
    string,
    string
  >;
  const keys = Object.keys(sel).sort();
  return keys.length === 0 ? '<none>' : keys.map((k) => `${k}=${sel[k]}`).join(',');
}

function templateGeneration(o: KubeObject): number {
  const v = Number(o.metadata.annotations?.[TEMPLATE_GENERATION_ANNOTATION]);
  return Number.isInteger(v) && v > 0 ? v : 0;
}

const statusDoc = (f: string): string => fieldDoc('apps', 'DaemonSet', ['status', f]);

export const daemonSetResource = baseResourceDef({
  group: 'apps',
  version: 'v1',
  kind: 'DaemonSet',
  plural: 'daemonsets',
  namespaced: true,
  hasStatus: true,
  shortNames: ['ds'],
  categories: ['all'],
  columns: [
    nameColumn(),
    column('Desired', statusDoc('desiredNumberScheduled'), { type: 'integer' }),
    column('Current', statusDoc('currentNumberScheduled'), { type: 'integer' }),
    column('Ready', statusDoc('numberReady'), { type: 'integer' }),
    column('Up-to-date', statusDoc('updatedNumberScheduled'), { type: 'integer' }),
    column('Available', statusDoc('numberAvailable'), { type: 'integer' }),
    column('Node Selector', fieldDoc('', 'Pod', ['spec', 'nodeSelector'])),
    ageColumn(),
    ...wideWorkloadColumns({ selectorDoc: fieldDoc('apps', 'DaemonSet', ['spec', 'selector']) }),
  ],
  row: (o, now) => {
    const status = objectAt(o, 'status');
    return [
      o.metadata.name ?? '',
      num(status?.desiredNumberScheduled),
      num(status?.currentNumberScheduled),
      num(status?.numberReady),
      num(status?.updatedNumberScheduled),
      num(status?.numberAvailable),
      nodeSelectorCell(o),
      age(o, now),
      ...containersAndImages(o),
      selectorCell(o),
    ];
  },
  statusResetsMeta: true,
  defaults,
  prepareForCreate(o) {
    o.status = {};
    o.metadata.generation = 1;
    o.metadata.annotations = { ...o.metadata.annotations, [TEMPLATE_GENERATION_ANNOTATION]: '1' };
  },
  prepareForUpdate(o, old) {
    // The template generation is the server's: kept, and raised when the template changes.
    const oldSpec = objectAt(old, 'spec') ?? {};
    const spec = objectAt(o, 'spec') ?? {};
    const changed = !jsonEqual(spec.template ?? null, oldSpec.template ?? null);
    const generation = templateGeneration(old) + (changed ? 1 : 0);
    o.metadata.annotations = { ...o.metadata.annotations, [TEMPLATE_GENERATION_ANNOTATION]: String(generation) };
  },
  validateCreate: (o) => [
    ...validateObjectMeta(o.metadata, { namespaced: true, nameFn: nameIsDNSSubdomain }),
    ...validateSpec(o),
  ],
  validateUpdate: (o, old) => [
    ...validateObjectMetaUpdate(o.metadata, old.metadata),
    ...validateSpec(o),
    ...validateSelectorImmutable(o, old),
  ],
  validateStatusUpdate: (o, old) => [...validateObjectMetaUpdate(o.metadata, old.metadata), ...validateStatus(o)],
});
