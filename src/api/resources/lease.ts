import type { FieldCause } from '../../util/errors.js';
import { patchMetaFor, schemaFor } from '../openapi/schemas.js';
import { objectAt, strAt } from './corehelpers.js';
import { invalid } from './fielderrors.js';
import { nameIsDNSSubdomain, validateObjectMeta, validateObjectMetaUpdate } from './names.js';
import { age, ageColumn, column, fieldDoc, nameColumn } from './printing.js';
import type { KubeObject, ResourceDef } from './types.js';

/** ValidateLeaseSpec: durations positive, transitions non-negative. */
function validateLeaseSpec(obj: KubeObject): FieldCause[] {
  const out: FieldCause[] = [];
  const spec = objectAt(obj, 'spec');
  const duration = spec?.leaseDurationSeconds;
  if (duration !== undefined && duration !== null && (typeof duration !== 'number' || duration <= 0)) {
    out.push(invalid('spec.leaseDurationSeconds', duration as number, 'must be greater than 0'));
  }
  const transitions = spec?.leaseTransitions;
  if (transitions !== undefined && transitions !== null && (typeof transitions !== 'number' || transitions < 0)) {
    out.push(invalid('spec.leaseTransitions', transitions as number, 'must be greater than or equal to 0'));
  }
  return out;
}

export const leaseResource: ResourceDef = {
  group: 'coordination.k8s.io',
  version: 'v1',
  kind: 'Lease',
  listKind: 'LeaseList',
  plural: 'leases',
  singular: 'lease',
  namespaced: true,
  shortNames: [],
  categories: [],
  hasStatus: false,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  schema: schemaFor('coordination.k8s.io', 'v1', 'Lease'),
  fieldSelectors: {},
  columns: [
    nameColumn(),
    column('Holder', fieldDoc('coordination.k8s.io', 'Lease', ['spec', 'holderIdentity'])),
    ageColumn(),
  ],
  row: (o, now) => [o.metadata.name ?? '', strAt(objectAt(o, 'spec'), 'holderIdentity'), age(o, now)],

  prepareForCreate() {},
  prepareForUpdate() {},
  prepareForStatusUpdate() {},
  validateCreate(obj) {
    return [
      ...validateObjectMeta(obj.metadata, { namespaced: true, nameFn: nameIsDNSSubdomain }),
      ...validateLeaseSpec(obj),
    ];
  },
  validateUpdate(obj, old) {
    return [...validateObjectMetaUpdate(obj.metadata, old.metadata), ...validateLeaseSpec(obj)];
  },
  validateStatusUpdate() {
    return [];
  },
  patchMeta: patchMetaFor('coordination.k8s.io', 'v1', 'Lease'),
};
