/** apps/v1 Deployment: defaults and validation as kube's apps validation, kubectl's columns, status and scale subresources. */
import type { FieldCause } from '../../util/errors.js';
import { objectAt } from './corehelpers.js';
import { baseResourceDef } from './common.js';

import { forbidden, invalid, notSupported } from './fielderrors.js';

import { nameIsDNSSubdomain, validateObjectMeta, validateObjectMetaUpdate } from './names.js';

import { validateIntOrPercent } from './poddisruptionbudget.js';

import {
  applyTemplateDefaults,
  nonNegativeInt,
  REPLICASET_TEMPLATE_RULES,
  validateSelectorImmutable,
  validateWorkloadTemplate,
} from './podtemplate.js';

import { containersAndImages, selectorCell, wideWorkloadColumns } from './workloadprinting.js';

import { age, ageColumn, column, fieldDoc, nameColumn } from './printing.js';

import { validateReplicaStatus } from './replicaset.js';

import { scaleSubresource } from './scale.js';

import type { KubeObject } from './types.js';
import { jsonEqual } from '../../util/jsonequal.js';

type Obj = Record<string, unknown>;
const num = (v: unknown): number => (typeof v === 'number' ? v : 0);

export const DEPLOYMENT_STRATEGIES = ['Recreate', 'RollingUpdate'] as const;

/** apps/v1 SetDefaults_Deployment. */
function defaults(o: KubeObject): void {
  const spec = (objectAt(o, 'spec') ?? (o.spec = {})) as Obj;
  spec.replicas ??= 1;
  const strategy = (objectAt(spec, 'strategy') ?? (spec.strategy = {})) as Obj;
  if (!strategy.type) strategy.type = 'RollingUpdate';
  if (strategy.type === 'RollingUpdate') {
    const ru = (objectAt(strategy, 'rollingUpdate') ?? (strategy.rollingUpdate = {})) as Obj;
    ru.maxUnavailable ??= '25%';
    ru.maxSurge ??= '25%';
  }
  spec.revisionHistoryLimit ??= 10;
  spec.progressDeadlineSeconds ??= 600;
  applyTemplateDefaults(spec);
}

/** IsZero of an int-or-string: 0 or "0%". */
function isZero(v: unknown): boolean {
  return v === 0 || v === '0%' || v === undefined || v === null;
}

function validateStrategy(spec: Obj): FieldCause[] {
  const strategy = objectAt(spec, 'strategy') ?? {};
  const out: FieldCause[] = [];
  const type = strategy.type;
  if (!DEPLOYMENT_STRATEGIES.includes(type as (typeof DEPLOYMENT_STRATEGIES)[number])) {
    out.push(notSupported('spec.strategy.type', String(type ?? ''), DEPLOYMENT_STRATEGIES));
    return out;
  }
  const ru = objectAt(strategy, 'rollingUpdate');
  if (type === 'Recreate') {
    if (strategy.rollingUpdate !== undefined && strategy.rollingUpdate !== null) {
      out.push(forbidden('spec.strategy.rollingUpdate', "may not be specified when strategy `type` is 'Recreate'"));
    }
    return out;
  }
  if (!ru) return out;
  out.push(...validateIntOrPercent(ru.maxUnavailable, 'spec.strategy.rollingUpdate.maxUnavailable'));
  out.push(...validateIntOrPercent(ru.maxSurge, 'spec.strategy.rollingUpdate.maxSurge', { over100: true }));
  if (isZero(ru.maxUnavailable) && isZero(ru.maxSurge)) {
    out.push(
      invalid(
        'spec.strategy.rollingUpdate.maxUnavailable',
        ru.maxUnavailable as number,
        'may not be 0 when `maxSurge` is 0',
      ),
    );
  }
  return out;
}

function validateSpec(o: KubeObject): FieldCause[] {
  const spec = objectAt(o, 'spec') ?? {};
  const out = [
    ...nonNegativeInt(o, 'replicas'),
    ...validateWorkloadTemplate(spec, REPLICASET_TEMPLATE_RULES),
    ...validateStrategy(spec),
    ...nonNegativeInt(o, 'minReadySeconds'),
    ...nonNegativeInt(o, 'revisionHistoryLimit'),
    ...nonNegativeInt(o, 'progressDeadlineSeconds'),
  ];
  const deadline = spec.progressDeadlineSeconds;
  if (typeof deadline === 'number' && deadline <= num(spec.minReadySeconds)) {
    out.push(invalid('spec.progressDeadlineSeconds', deadline, 'must be greater than minReadySeconds'));
  }
  return out;
}

/** kubectl's READY cell: ready/desired. */
function readyCell(o: KubeObject): string {
  return `${num(objectAt(o, 'status')?.readyReplicas)}/${num(objectAt(o, 'spec')?.replicas)}`;
}

export const deploymentResource = baseResourceDef({
  group: 'apps',
  version: 'v1',
  kind: 'Deployment',
  plural: 'deployments',
  namespaced: true,
  hasStatus: true,
  shortNames: ['deploy'],
  categories: ['all'],
  subresources: [scaleSubresource()],
  columns: [
    nameColumn(),
    column('Ready', 'Number of the pod with ready state'),
    column('Up-to-date', fieldDoc('apps', 'Deployment', ['status', 'updatedReplicas']), { type: 'integer' }),
    column('Available', fieldDoc('apps', 'Deployment', ['status', 'availableReplicas']), { type: 'integer' }),
    ageColumn(),
    ...wideWorkloadColumns({ selectorDoc: fieldDoc('apps', 'Deployment', ['spec', 'selector']) }),
  ],
  row: (o, now) => {
    const status = objectAt(o, 'status');
    return [
      o.metadata.name ?? '',
      readyCell(o),
      num(status?.updatedReplicas),
      num(status?.availableReplicas),
      age(o, now),
      ...containersAndImages(o),
      selectorCell(o),
    ];
  },
  defaults,
  prepareForCreate(o) {
    o.status = {};
    o.metadata.generation = 1;
  },
  prepareForUpdate(o, old) {
    // kube bumps the generation on annotation changes too: they are copied to the ReplicaSets.
    if (!jsonEqual(o.metadata.annotations ?? {}, old.metadata.annotations ?? {}))
      o.metadata.generation = (old.metadata.generation ?? 0) + 1;
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
  validateStatusUpdate: (o, old) => [
    ...validateObjectMetaUpdate(o.metadata, old.metadata),
    ...validateReplicaStatus(o),
  ],
});
