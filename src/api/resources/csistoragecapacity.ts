import type { FieldCause } from '../../util/errors.js';
import type { KubeObject, ResourceDef } from './types.js';
import {
  FIELD_IMMUTABLE,
  NAME_COLUMN,
  baseResourceDef,
  canonicalQuantity,
  column,
  invalid,
  nameIsDNSSubdomain,
  str,
  validateLabelSelector,
  validateObjectMeta,
  validateObjectMetaUpdate,
} from './common.js';
import { quantityText, validateQuantityField } from './persistentvolume.js';
import { jsonEqual } from '../../util/jsonequal.js';

function validateCapacity(c: KubeObject): FieldCause[] {
  const out = validateObjectMeta(c.metadata, { namespaced: true });
  out.push(...validateLabelSelector(c.nodeTopology, 'nodeTopology'));
  // An empty class name fails the DNS-subdomain rule: Kubernetes reports it as invalid, not required.
  const sc = str(c.storageClassName) ?? '';
  for (const m of nameIsDNSSubdomain(sc, false)) out.push(invalid('storageClassName', sc, m));
  if (c.capacity !== undefined && c.capacity !== null)
    out.push(...validateQuantityField(c.capacity, 'capacity', 'nonnegative'));
  return out;
}

function validateCapacityUpdate(c: KubeObject, old: KubeObject): FieldCause[] {
  const out = [...validateCapacity(c), ...validateObjectMetaUpdate(c.metadata, old.metadata)];
  // The inputs of CSI GetCapacity are immutable.
  if (!jsonEqual(c.nodeTopology ?? null, old.nodeTopology ?? null))
    out.push(invalid('nodeTopology', c.nodeTopology ?? null, FIELD_IMMUTABLE));
  if ((c.storageClassName ?? '') !== (old.storageClassName ?? ''))
    out.push(invalid('storageClassName', str(c.storageClassName) ?? '', FIELD_IMMUTABLE));
  return out;
}

export const csiStorageCapacityResource: ResourceDef = baseResourceDef({
  group: 'storage.k8s.io',
  version: 'v1',
  kind: 'CSIStorageCapacity',
  plural: 'csistoragecapacities',
  namespaced: true,
  hasStatus: false,
  // Kubernetes prints no AGE column for this kind.
  columns: [
    NAME_COLUMN,
    column(
      'StorageClassName',
      'string',
      'storageClassName represents the name of the StorageClass that the reported capacity applies to.',
    ),
    column(
      'Capacity',
      'string',
      'capacity is the value reported by the CSI driver in its GetCapacityResponse for a GetCapacityRequest with topology and parameters that match the previous fields.',
    ),
  ],
  row: (c) => [
    c.metadata.name ?? '',
    str(c.storageClassName) ?? '',
    c.capacity === undefined || c.capacity === null ? '<unset>' : quantityText(c.capacity),
  ],
  defaults(c) {
    if (c.capacity !== undefined && c.capacity !== null) c.capacity = canonicalQuantity(c.capacity);
    if (c.maximumVolumeSize !== undefined && c.maximumVolumeSize !== null)
      c.maximumVolumeSize = canonicalQuantity(c.maximumVolumeSize);
  },
  validateCreate: (c) => validateCapacity(c),
  validateUpdate: (c, old) => validateCapacityUpdate(c, old),
});
