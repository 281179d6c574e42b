/** apps/v1 StatefulSet: defaults and validation as kube's apps strategy, kubectl's columns. */
import { scaleSubresource } from './scale.js';

import type { FieldCause } from '../../util/errors.js';
import { listAt, objectAt } from './corehelpers.js';
import { baseResourceDef } from './common.js';

import { forbidden, invalid, nonNegativeField, notSupported, required } from './fielderrors.js';

import { nameIsDNSSubdomain, validateObjectMeta, validateObjectMetaUpdate } from './names.js';

import { applyClaimDefaults } from './persistentvolumeclaim.js';

import { applyTemplateDefaults, STATEFULSET_TEMPLATE_RULES, validateWorkloadTemplate } from './podtemplate.js';

import { age, ageColumn, column, nameColumn } from './printing.js';

import { containersAndImages, wideWorkloadColumns } from './workloadprinting.js';

import type { KubeObject } from './types.js';
import { jsonEqual } from '../../util/jsonequal.js';

type Obj = Record<string, unknown>;

export const POD_MANAGEMENT_POLICIES = ['OrderedReady', 'Parallel'] as const;
export const STATEFULSET_UPDATE_STRATEGIES = ['OnDelete', 'RollingUpdate'] as const;
export const CLAIM_RETENTION_POLICIES = ['Delete', 'Retain'] as const;

function setDefault(o: Obj, key: string, v: unknown): void {
  if (o[key] === undefined || o[key] === null) o[key] = v;
}

/** SetDefaults_StatefulSet (apps/v1), the claim templates' PVC defaults, and the template's pod defaults. */
export function applyStatefulSetDefaults(sts: KubeObject): void {
  const spec = objectAt(sts, 'spec');
  if (!spec) return;
  setDefault(spec, 'podManagementPolicy', 'OrderedReady');
  setDefault(spec, 'updateStrategy', { type: 'RollingUpdate' });
  const strategy = objectAt(spec, 'updateStrategy') ?? {};
  setDefault(strategy, 'type', 'RollingUpdate');
  if (strategy.type === 'RollingUpdate') {
    setDefault(strategy, 'rollingUpdate', {});
    setDefault(objectAt(strategy, 'rollingUpdate') ?? {}, 'partition', 0);
  }
  setDefault(spec, 'persistentVolumeClaimRetentionPolicy', {});
  const retention = objectAt(spec, 'persistentVolumeClaimRetentionPolicy') ?? {};
  setDefault(retention, 'whenDeleted', 'Retain');
  setDefault(retention, 'whenScaled', 'Retain');
  setDefault(spec, 'replicas', 1);
  setDefault(spec, 'revisionHistoryLimit', 10);
  // The template's labels label the set when it has none (apps/v1 defaulting).
  const templateLabels = objectAt(objectAt(objectAt(spec, 'template'), 'metadata'), 'labels');
  if (templateLabels && Object.keys(sts.metadata.labels ?? {}).length === 0)
    sts.metadata.labels = { ...(templateLabels as Record<string, string>) };
  for (const t of listAt(spec, 'volumeClaimTemplates')) {
    // Claim templates are PersistentVolumeClaims and get their defaults, status phase included.
    setDefault(t, 'apiVersion', 'v1');
    setDefault(t, 'kind', 'PersistentVolumeClaim');
    setDefault(t, 'metadata', {});
    setDefault(t, 'status', {});
    applyClaimDefaults(t as KubeObject);
  }
  applyTemplateDefaults(spec);
}

function nonNegative(o: Obj, key: string, out: FieldCause[], field = `spec.${key}`): void {
  out.push(...nonNegativeField(o[key], field));
}

function validateSpec(sts: KubeObject): FieldCause[] {
  const spec = objectAt(sts, 'spec');
  if (!spec) return [required('spec')];
  const out: FieldCause[] = [];
  const policy = spec.podManagementPolicy;
  if (policy === '' || policy === undefined) out.push(required('spec.podManagementPolicy'));
  else if (!(POD_MANAGEMENT_POLICIES as readonly unknown[]).includes(policy)) {
    out.push(
      invalid(
        'spec.podManagementPolicy',
        String(policy),
        `must be '${POD_MANAGEMENT_POLICIES[0]}' or '${POD_MANAGEMENT_POLICIES[1]}'`,
      ),
    );
  }
  const strategy = objectAt(spec, 'updateStrategy') ?? {};
  const type = strategy.type;
  if (type === 'OnDelete') {
    if (strategy.rollingUpdate !== undefined && strategy.rollingUpdate !== null) {
      out.push(
        invalid(
          'spec.updateStrategy.rollingUpdate',
          { rendered: 'rollingUpdate' },
          `only allowed for updateStrategy 'RollingUpdate'`,
        ),
      );
    }
  } else if (type === 'RollingUpdate') {
    nonNegative(
      objectAt(strategy, 'rollingUpdate') ?? {},
      'partition',
      out,
      'spec.updateStrategy.rollingUpdate.partition',
    );
  } else if (type === undefined || type === '') out.push(required('spec.updateStrategy'));
  else
    out.push(
      invalid(
        'spec.updateStrategy',
        String(type),
        `must be '${STATEFULSET_UPDATE_STRATEGIES[1]}' or '${STATEFULSET_UPDATE_STRATEGIES[0]}'`,
      ),
    );
  const retention = objectAt(spec, 'persistentVolumeClaimRetentionPolicy') ?? {};
  for (const k of ['whenDeleted', 'whenScaled']) {
    const v = retention[k];
    if (!(CLAIM_RETENTION_POLICIES as readonly unknown[]).includes(v)) {
      out.push(notSupported(`spec.persistentVolumeClaimRetentionPolicy.${k}`, String(v), ['Retain', 'Delete']));
    }
  }
  nonNegative(spec, 'replicas', out);
  nonNegative(spec, 'minReadySeconds', out);
  nonNegative(spec, 'revisionHistoryLimit', out);
  nonNegative(objectAt(spec, 'ordinals') ?? {}, 'start', out, 'spec.ordinals.start');
  // As kube (ValidatePodTemplateSpecForStatefulSet): the pod spec and the claim templates are not
  // validated here; a pod or claim they make that the API refuses is a FailedCreate event.
  out.push(...validateWorkloadTemplate(spec, STATEFULSET_TEMPLATE_RULES));
  return out;
}

/** Fields of a StatefulSet's spec that may change after creation (ValidateStatefulSetUpdate). */
const MUTABLE_SPEC_FIELDS = [
  'replicas',
  'ordinals',
  'template',
  'updateStrategy',
  'persistentVolumeClaimRetentionPolicy',
  'minReadySeconds',
] as const;

function validateSpecUpdate(sts: KubeObject, old: KubeObject): FieldCause[] {
  const strip = (o: KubeObject): Obj => {
    const s = { ...(objectAt(o, 'spec') ?? {}) };
    for (const k of MUTABLE_SPEC_FIELDS) delete s[k];
    return s;
  };
  if (jsonEqual(strip(sts), strip(old))) return [];
  return [
    forbidden(
      'spec',
      "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
    ),
  ];
}

const STATUS_COUNTS = [
  'replicas',
  'readyReplicas',
  'currentReplicas',
  'updatedReplicas',
  'availableReplicas',
  'observedGeneration',
  'collisionCount',
] as const;

function validateStatus(sts: KubeObject): FieldCause[] {
  const status = objectAt(sts, 'status') ?? {};
  const out: FieldCause[] = [];
  for (const k of STATUS_COUNTS) nonNegative(status, k, out, `status.${k}`);
  const replicas = Number(status.replicas ?? 0);
  for (const k of ['readyReplicas', 'currentReplicas', 'updatedReplicas'] as const) {
    if (typeof status[k] === 'number' && (status[k] as number) > replicas) {
      out.push(invalid(`status.${k}`, status[k] as number, 'cannot be greater than status.replicas'));
    }
  }
  if (
    typeof status.availableReplicas === 'number' &&
    typeof status.readyReplicas === 'number' &&
    status.availableReplicas > status.readyReplicas
  ) {
    out.push(
      invalid('status.availableReplicas', status.availableReplicas, 'cannot be greater than status.readyReplicas'),
    );
  }
  return out;
}

const meta = (o: KubeObject): FieldCause[] =>
  validateObjectMeta(o.metadata, { namespaced: true, nameFn: nameIsDNSSubdomain });

export const statefulSetResource = baseResourceDef({
  group: 'apps',
  version: 'v1',
  kind: 'StatefulSet',
  plural: 'statefulsets',
  namespaced: true,
  hasStatus: true,
  shortNames: ['sts'],
  subresources: [scaleSubresource()],
  categories: ['all'],
  columns: [nameColumn(), column('Ready', 'Number of the pod with ready state'), ageColumn(), ...wideWorkloadColumns()],
  row: (o, now) => {
    const spec = objectAt(o, 'spec') ?? {};
    const status = objectAt(o, 'status') ?? {};
    return [
      o.metadata.name ?? '',
      `${Number(status.readyReplicas ?? 0)}/${Number(spec.replicas ?? 0)}`,
      age(o, now),
      ...containersAndImages(o),
    ];
  },
  statusResetsMeta: true,
  defaults: applyStatefulSetDefaults,
  prepareForCreate(o) {
    o.status = {};
    o.metadata.generation = 1;
  },
  validateCreate: (o) => [...meta(o), ...validateSpec(o)],
  validateUpdate: (o, old) => [
    ...validateObjectMetaUpdate(o.metadata, old.metadata),
    ...validateSpec(o),
    ...validateSpecUpdate(o, old),
  ],
  validateStatusUpdate: (o, old) => [...validateObjectMetaUpdate(o.metadata, old.metadata), ...validateStatus(o)],
});
