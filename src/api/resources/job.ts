/** batch/v1 Job: defaults, the generated selector, validation as kube's batch strategy, kubectl's columns. */
import type { FieldCause } from '../../util/errors.js';
import {
  JOB_CONTROLLER_UID_LABEL,
  JOB_NAME_LABEL,
  LEGACY_JOB_CONTROLLER_UID_LABEL,
  LEGACY_JOB_NAME_LABEL,
} from '../../kube/workloads.js';

import { ensureObject, listAt, objectAt } from './corehelpers.js';
import { baseResourceDef, humanDuration } from './common.js';

import { FIELD_IMMUTABLE, invalid, nonNegativeField, notSupported, required } from './fielderrors.js';

import { isDNS1123Label, nameIsDNSSubdomain, validateObjectMeta, validateObjectMetaUpdate } from './names.js';

import { applyTemplateDefaults, JOB_TEMPLATE_RULES, validateWorkloadTemplate } from './podtemplate.js';

import { age, ageColumn, column, fieldDoc, nameColumn } from './printing.js';

import { containersAndImages, selectorCell, wideWorkloadColumns } from './workloadprinting.js';

import type { KubeObject } from './types.js';
import { jsonEqual } from '../../util/jsonequal.js';

type Obj = Record<string, unknown>;

export const COMPLETION_MODES = ['Indexed', 'NonIndexed'] as const;
export const JOB_RESTART_POLICIES = ['OnFailure', 'Never'] as const;
const POD_REPLACEMENT_POLICIES = ['Failed', 'TerminatingOrFailed'] as const;

function setDefault(o: Obj, key: string, v: unknown): void {
  if (o[key] === undefined || o[key] === null) o[key] = v;
}

/** SetDefaults_Job (batch/v1), at v1.30 with its default feature gates. */
export function applyJobDefaults(job: KubeObject): void {
  const spec = objectAt(job, 'spec');
  if (!spec) return;
  if (
    (spec.completions === undefined || spec.completions === null) &&
    (spec.parallelism === undefined || spec.parallelism === null)
  ) {
    spec.completions = 1;
    spec.parallelism = 1;
  }
  setDefault(spec, 'parallelism', 1);
  setDefault(
    spec,
    'backoffLimit',
    spec.backoffLimitPerIndex !== undefined && spec.backoffLimitPerIndex !== null ? 2147483647 : 6,
  );
  setDefault(spec, 'completionMode', 'NonIndexed');
  setDefault(spec, 'suspend', false);
  setDefault(spec, 'podReplacementPolicy', spec.podFailurePolicy ? 'Failed' : 'TerminatingOrFailed');
  const templateLabels = objectAt(objectAt(objectAt(spec, 'template'), 'metadata'), 'labels');
  if (templateLabels && Object.keys(job.metadata.labels ?? {}).length === 0)
    job.metadata.labels = { ...(templateLabels as Record<string, string>) };
  applyTemplateDefaults(spec);
}

/**
 * The Job strategy's generateSelector: unless `manualSelector` is true, the template is labelled
 * with the Job's uid and name and the selector is the uid label.
 */
function generateSelector(job: KubeObject): void {
  const spec = objectAt(job, 'spec');
  if (!spec || spec.manualSelector === true) return;
  const uid = job.metadata.uid ?? '';
  const name = job.metadata.name ?? '';
  const template = ensureObject(spec, 'template');
  const meta = ensureObject(template, 'metadata');
  const labels = ensureObject(meta, 'labels');
  labels[JOB_CONTROLLER_UID_LABEL] ??= uid;
  labels[JOB_NAME_LABEL] ??= name;
  labels[LEGACY_JOB_CONTROLLER_UID_LABEL] ??= uid;
  labels[LEGACY_JOB_NAME_LABEL] ??= name;
  spec.selector ??= { matchLabels: { [JOB_CONTROLLER_UID_LABEL]: uid } };
}

function nonNegative(o: Obj, key: string, field: string, out: FieldCause[]): void {
  out.push(...nonNegativeField(o[key], field));
}

/** validateGeneratedSelector: without manualSelector the selector must be the generated one. */
function validateGeneratedSelector(job: KubeObject, spec: Obj): FieldCause[] {
  if (spec.manualSelector === true) return [];
  const uid = job.metadata.uid ?? '';
  const selector = objectAt(spec, 'selector');
  const labels = objectAt(objectAt(objectAt(spec, 'template'), 'metadata'), 'labels') ?? {};
  const out: FieldCause[] = [];
  if (labels[JOB_CONTROLLER_UID_LABEL] !== uid) {
    out.push(
      invalid(
        `spec.template.metadata.labels`,
        { rendered: 'map[string]string{...}' },
        `\`selector\` not auto-generated`,
      ),
    );
  }
  if (selector && objectAt(selector, 'matchLabels')?.[JOB_CONTROLLER_UID_LABEL] !== uid) {
    out.push(invalid('spec.selector', { rendered: 'v1.LabelSelector{...}' }, '`selector` not auto-generated'));
  }
  return out;
}

function validateSpec(job: KubeObject): FieldCause[] {
  const spec = objectAt(job, 'spec');
  if (!spec) return [required('spec')];
  const out: FieldCause[] = [];
  for (const k of [
    'parallelism',
    'completions',
    'activeDeadlineSeconds',
    'backoffLimit',
    'ttlSecondsAfterFinished',
    'backoffLimitPerIndex',
    'maxFailedIndexes',
  ]) {
    nonNegative(spec, k, `spec.${k}`, out);
  }
  const mode = spec.completionMode;
  if (!(COMPLETION_MODES as readonly unknown[]).includes(mode))
    out.push(notSupported('spec.completionMode', String(mode), COMPLETION_MODES));
  if (mode === 'Indexed') {
    const completions = spec.completions;
    if (completions === undefined || completions === null)
      out.push(required('spec.completions', `when completion mode is ${mode}`));
    else if (typeof completions === 'number' && completions > 100000)
      out.push(
        invalid(
          'spec.completions',
          completions,
          'must be less than or equal to 100000 when completion mode is Indexed',
        ),
      );
    if (typeof completions === 'number' && completions > 0) {
      // Pods get the hostname `<job>-<index>`: the highest must be a DNS label.
      const name = job.metadata.name ?? '';
      const highest = `${name}-${completions - 1}`;
      if (isDNS1123Label(highest).length)
        out.push(invalid('metadata.name', name, `will not able to create pod with invalid DNS label: ${highest}`));
    }
  }
  const replacement = spec.podReplacementPolicy;
  if (!(POD_REPLACEMENT_POLICIES as readonly unknown[]).includes(replacement))
    out.push(notSupported('spec.podReplacementPolicy', String(replacement), POD_REPLACEMENT_POLICIES));
  out.push(...validateWorkloadTemplate(spec, JOB_TEMPLATE_RULES));
  out.push(...validateGeneratedSelector(job, spec));
  const restart = objectAt(objectAt(spec, 'template'), 'spec')?.restartPolicy;
  // A pod failure policy judges failed pods, which OnFailure never produces.
  if (spec.podFailurePolicy && restart === 'OnFailure')
    out.push(notSupported('spec.template.spec.restartPolicy', String(restart), ['Never']));
  return out;
}

/** Fields of a Job's spec that never change (ValidateJobSpecUpdate at 1.30, suspended-job template edits aside). */
const IMMUTABLE_SPEC_FIELDS = [
  'completions',
  'selector',
  'template',
  'completionMode',
  'podFailurePolicy',
  'backoffLimitPerIndex',
  'manualSelector',
] as const;

function validateSpecUpdate(job: KubeObject, old: KubeObject): FieldCause[] {
  const spec = objectAt(job, 'spec') ?? {};
  const oldSpec = objectAt(old, 'spec') ?? {};
  const out: FieldCause[] = [];
  for (const k of IMMUTABLE_SPEC_FIELDS) {
    if (k === 'completions' && elasticIndexed(spec, oldSpec)) continue;
    if (
      k === 'template' &&
      jsonEqual(schedulingFree(spec.template), schedulingFree(oldSpec.template)) &&
      suspendedNeverStarted(job, old)
    )
      continue;
    if (!jsonEqual(spec[k], oldSpec[k]))
      out.push(invalid(`spec.${k}`, { rendered: renderValue(spec[k]) }, FIELD_IMMUTABLE));
  }
  return out;
}

/** Elastic Indexed Jobs (1.27+): completions may change together with parallelism while both are equal. */
function elasticIndexed(spec: Obj, oldSpec: Obj): boolean {
  return (
    spec.completionMode === 'Indexed' &&
    spec.completions === spec.parallelism &&
    oldSpec.completions === oldSpec.parallelism
  );
}

/**
 * A Job suspended that never started may have its pods' scheduling directives changed (1.27+):
 * the template's labels, annotations, nodeSelector, affinity, tolerations and scheduling gates.
 */
function suspendedNeverStarted(job: KubeObject, old: KubeObject): boolean {
  return (
    objectAt(old, 'spec')?.suspend === true &&
    objectAt(job, 'status')?.startTime === undefined &&
    objectAt(old, 'status')?.startTime === undefined
  );
}

function schedulingFree(template: unknown): unknown {
  const t = structuredClone(objectAt({ t: template }, 't') ?? {});
  const meta = objectAt(t, 'metadata');
  if (meta) {
    delete meta.labels;
    delete meta.annotations;
  }
  const podSpec = objectAt(t, 'spec');
  if (podSpec) for (const k of ['nodeSelector', 'affinity', 'tolerations', 'schedulingGates']) delete podSpec[k];
  return t;
}

function renderValue(v: unknown): string {
  if (v === undefined || v === null) return 'null';
  return typeof v === 'object' ? '{...}' : String(v);
}

function validateStatus(job: KubeObject): FieldCause[] {
  const status = objectAt(job, 'status') ?? {};
  const out: FieldCause[] = [];
  for (const k of ['active', 'succeeded', 'failed', 'ready', 'terminating']) nonNegative(status, k, `status.${k}`, out);
  return out;
}

function hasTrueCondition(job: KubeObject, type: string): boolean {
  return listAt(objectAt(job, 'status'), 'conditions').some((c) => c.type === type && c.status === 'True');
}

/** The STATUS cell (kubectl 1.28+ printJob). */
export function jobStatusCell(job: KubeObject): string {
  if (hasTrueCondition(job, 'Complete')) return 'Complete';
  if (hasTrueCondition(job, 'Failed')) return 'Failed';
  if (job.metadata.deletionTimestamp) return 'Terminating';
  if (hasTrueCondition(job, 'SuccessCriteriaMet')) return 'SuccessCriteriaMet';
  if (hasTrueCondition(job, 'Suspended')) return 'Suspended';
  if (hasTrueCondition(job, 'FailureTarget')) return 'FailureTarget';
  return 'Running';
}

/** The COMPLETIONS cell: `succeeded/completions`, or `succeeded/1 of parallelism` for a work queue. */
export function completionsCell(job: KubeObject): string {
  const spec = objectAt(job, 'spec') ?? {};
  const succeeded = Number(objectAt(job, 'status')?.succeeded ?? 0);
  if (typeof spec.completions === 'number') return `${succeeded}/${spec.completions}`;
  const parallelism = Number(spec.parallelism ?? 0);
  return parallelism > 1 ? `${succeeded}/1 of ${parallelism}` : `${succeeded}/1`;
}

/** The DURATION cell: from startTime to completionTime (or now while running). */
export function durationCell(job: KubeObject, now: number): string {
  const status = objectAt(job, 'status') ?? {};
  const start = typeof status.startTime === 'string' ? Date.parse(status.startTime) : NaN;
  if (Number.isNaN(start)) return '';
  const end = typeof status.completionTime === 'string' ? Date.parse(status.completionTime) : now;
  return humanDuration(end - start);
}

export const jobResource = baseResourceDef({
  group: 'batch',
  version: 'v1',
  kind: 'Job',
  plural: 'jobs',
  namespaced: true,
  hasStatus: true,
  categories: ['all'],
  statusResetsMeta: true,
  columns: [
    nameColumn(),
    column('Status', 'Status of the job.'),
    column('Completions', 'The completion status of the job.'),
    column('Duration', 'Time required to complete the job.'),
    ageColumn(),
    ...wideWorkloadColumns({ selectorDoc: fieldDoc('batch', 'Job', ['spec', 'selector']) }),
  ],
  row: (o, now) => [
    o.metadata.name ?? '',
    jobStatusCell(o),
    completionsCell(o),
    durationCell(o, now),
    age(o, now),
    ...containersAndImages(o),
    selectorCell(o),
  ],
  defaults: applyJobDefaults,
  prepareForCreate(o) {
    o.status = {};
    o.metadata.generation = 1;
    generateSelector(o);
    // Kubernetes defaults on every decode, so a Job created without labels reads back with its
    // template's (generated ones included).
    applyJobDefaults(o);
  },
  validateCreate: (o) => [
    ...validateObjectMeta(o.metadata, { namespaced: true, nameFn: nameIsDNSSubdomain }),
    ...validateSpec(o),
  ],
  validateUpdate: (o, old) => [
    ...validateObjectMetaUpdate(o.metadata, old.metadata),
    ...validateSpec(o),
    ...validateSpecUpdate(o, old),
  ],
  validateStatusUpdate: (o, old) => [...validateObjectMetaUpdate(o.metadata, old.metadata), ...validateStatus(o)],
});
