/** apps/v1 ReplicaSet: defaults and validation as kube's apps validation, kubectl's columns, status and scale subresources. */
import type { FieldCause } from '../../util/errors.js';
import { objectAt } from './corehelpers.js';
import { baseResourceDef } from './common.js';
import { nonNegativeField } from './fielderrors.js';
import { nameIsDNSSubdomain, validateObjectMeta, validateObjectMetaUpdate } from './names.js';
import {
  applyTemplateDefaults,
  nonNegativeInt,
  REPLICASET_TEMPLATE_RULES,
  validateSelectorImmutable,
  validateWorkloadTemplate,
} from './podtemplate.js';
import { containersAndImages, selectorCell, wideWorkloadColumns } from './workloadprinting.js';
import { age, ageColumn, column, fieldDoc, nameColumn } from './printing.js';
import { scaleSubresource } from './scale.js';
import type { KubeObject } from './types.js';

const num = (v: unknown): number => (typeof v === 'number' ? v : 0);

/** apps/v1 SetDefaults_ReplicaSet: one replica. */
function defaults(o: KubeObject): void {
  const spec = (objectAt(o, 'spec') ?? (o.spec = {})) as Record<string, unknown>;
  if (spec.replicas === undefined || spec.replicas === null) spec.replicas = 1;
  applyTemplateDefaults(spec);
}

function validateSpec(o: KubeObject): FieldCause[] {
  const spec = objectAt(o, 'spec') ?? {};
  return [
    ...nonNegativeInt(o, 'replicas'),
    ...nonNegativeInt(o, 'minReadySeconds'),
    ...validateWorkloadTemplate(spec, REPLICASET_TEMPLATE_RULES),
  ];
}

export const replicaSetResource = baseResourceDef({
  group: 'apps',
  version: 'v1',
  kind: 'ReplicaSet',
  plural: 'replicasets',
  namespaced: true,
  hasStatus: true,
  shortNames: ['rs'],
  categories: ['all'],
  subresources: [scaleSubresource()],
  columns: [
    nameColumn(),
    column('Desired', fieldDoc('apps', 'ReplicaSet', ['spec', 'replicas']), { type: 'integer' }),
    column('Current', fieldDoc('apps', 'ReplicaSet', ['status', 'replicas']), { type: 'integer' }),
    column('Ready', fieldDoc('apps', 'ReplicaSet', ['status', 'readyReplicas']), { type: 'integer' }),
    ageColumn(),
    ...wideWorkloadColumns({ selectorDoc: fieldDoc('apps', 'ReplicaSet', ['spec', 'selector']) }),
  ],
  row: (o, now) => {
    const spec = objectAt(o, 'spec');
    const status = objectAt(o, 'status');
    return [
      o.metadata.name ?? '',
      num(spec?.replicas),
      num(status?.replicas),
      num(status?.readyReplicas),
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

/** ValidateReplicaSetStatus / ValidateDeploymentStatus: counts are non-negative and not above replicas. */
export function validateReplicaStatus(o: KubeObject): FieldCause[] {
  const status = objectAt(o, 'status') ?? {};
  const counts = [
    'replicas',
    'fullyLabeledReplicas',
    'readyReplicas',
    'availableReplicas',
    'updatedReplicas',
    'unavailableReplicas',
    'observedGeneration',
  ];
  return counts.flatMap((f) => nonNegativeField(status[f], `status.${f}`));
}
