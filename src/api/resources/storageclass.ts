import type { FieldCause } from '../../util/errors.js';
import type { KubeObject, ResourceDef } from './types.js';
import {
  AGE_COLUMN,
  FIELD_IMMUTABLE,
  NAME_COLUMN,
  ageString,
  arr,
  baseResourceDef,
  bool,
  column,
  forbidden,
  invalid,
  isQualifiedName,
  notSupported,
  obj,
  required,
  str,
  tooLong,
  validateObjectMeta,
  validateObjectMetaUpdate,
  validateTopologySelectorTerm,
  duplicate,
} from './common.js';

import { isDefaultStorageClass } from '../../kube/class.js';
import { jsonEqual } from '../../util/jsonequal.js';

const SC_RECLAIM_POLICIES = ['Delete', 'Retain'];
export const VOLUME_BINDING_MODES = ['Immediate', 'WaitForFirstConsumer'] as const;
const MAX_PARAMETERS = 512;
const MAX_PARAMETERS_SIZE = 256 * 1024;

function validateParameters(params: unknown, field: string): FieldCause[] {
  const entries = Object.entries(obj(params) ?? {});
  if (entries.length > MAX_PARAMETERS) return [tooLong(field, MAX_PARAMETERS)];
  const out: FieldCause[] = [];
  let size = 0;
  for (const [k, v] of entries) {
    if (k.length < 1) out.push(invalid(field, k, 'field can not be empty.'));
    size += Buffer.byteLength(k) + Buffer.byteLength(String(v));
  }
  if (size > MAX_PARAMETERS_SIZE) out.push(tooLong(field, MAX_PARAMETERS_SIZE));
  return out;
}

/**
 * `validateAllowedTopologies`. Kube seeds its list of seen terms with one empty term per entry,
 * so a term without expressions counts as a duplicate; that quirk is kept.
 */
function validateAllowedTopologies(v: unknown, field: string): FieldCause[] {
  const terms = arr(v) ?? [];
  const out: FieldCause[] = [];
  const seen: Array<Map<string, Set<string>>> = terms.map(() => new Map());
  const same = (a: Map<string, Set<string>>, b: Map<string, Set<string>>): boolean =>
    a.size === b.size && [...a].every(([k, s]) => b.has(k) && jsonEqual([...s].sort(), [...b.get(k)!].sort()));
  terms.forEach((t, i) => {
    const { exprs, causes } = validateTopologySelectorTerm(t, `${field}[${i}]`);
    out.push(...causes);
    for (const prev of seen) {
      if (same(exprs, prev)) out.push(duplicate(`${field}[${i}].matchLabelExpressions`, ''));
    }
    seen.push(exprs);
  });
  return out;
}

function validateStorageClass(sc: KubeObject): FieldCause[] {
  const out = validateObjectMeta(sc.metadata, { namespaced: false });
  const provisioner = str(sc.provisioner) ?? '';
  if (!provisioner) out.push(required('provisioner'));
  else for (const m of isQualifiedName(provisioner.toLowerCase())) out.push(invalid('provisioner', provisioner, m));
  out.push(...validateParameters(sc.parameters, 'parameters'));
  const policy = str(sc.reclaimPolicy) ?? '';
  if (policy && !SC_RECLAIM_POLICIES.includes(policy))
    out.push(notSupported('reclaimPolicy', policy, SC_RECLAIM_POLICIES));
  const mode = sc.volumeBindingMode;
  if (mode === undefined || mode === null) out.push(required('volumeBindingMode'));
  else if (!(VOLUME_BINDING_MODES as readonly unknown[]).includes(mode))
    out.push(notSupported('volumeBindingMode', String(mode), VOLUME_BINDING_MODES));
  out.push(...validateAllowedTopologies(sc.allowedTopologies, 'allowedTopologies'));
  return out;
}

function validateStorageClassUpdate(sc: KubeObject, old: KubeObject): FieldCause[] {
  const out = [...validateStorageClass(sc), ...validateObjectMetaUpdate(sc.metadata, old.metadata)];
  if (!jsonEqual(obj(sc.parameters) ?? {}, obj(old.parameters) ?? {}))
    out.push(forbidden('parameters', 'updates to parameters are forbidden.'));
  if ((sc.provisioner ?? '') !== (old.provisioner ?? ''))
    out.push(forbidden('provisioner', 'updates to provisioner are forbidden.'));
  if ((sc.reclaimPolicy ?? '') !== (old.reclaimPolicy ?? ''))
    out.push(forbidden('reclaimPolicy', 'updates to reclaimPolicy are forbidden.'));
  if (!jsonEqual(sc.volumeBindingMode ?? null, old.volumeBindingMode ?? null)) {
    out.push(invalid('volumeBindingMode', (sc.volumeBindingMode as string | undefined) ?? null, FIELD_IMMUTABLE));
  }
  return out;
}

export const storageClassResource: ResourceDef = baseResourceDef({
  group: 'storage.k8s.io',
  version: 'v1',
  kind: 'StorageClass',
  plural: 'storageclasses',
  namespaced: false,
  hasStatus: false,
  shortNames: ['sc'],
  columns: [
    NAME_COLUMN,
    column('Provisioner', 'string', 'provisioner indicates the type of the provisioner.'),
    column(
      'ReclaimPolicy',
      'string',
      'reclaimPolicy controls the reclaimPolicy for dynamically provisioned PersistentVolumes of this storage class. Defaults to Delete.',
    ),
    column(
      'VolumeBindingMode',
      'string',
      'volumeBindingMode indicates how PersistentVolumeClaims should be provisioned and bound.  When unset, VolumeBindingImmediate is used. This field is only honored by servers that enable the VolumeScheduling feature.',
    ),
    column(
      'AllowVolumeExpansion',
      'string',
      'allowVolumeExpansion shows whether the storage class allow volume expand.',
    ),
    AGE_COLUMN,
  ],
  row(sc, now) {
    const name = sc.metadata.name ?? '';
    return [
      isDefaultStorageClass(sc) ? `${name} (default)` : name,
      str(sc.provisioner) ?? '',
      str(sc.reclaimPolicy) ?? 'Delete',
      str(sc.volumeBindingMode) ?? 'Immediate',
      bool(sc.allowVolumeExpansion) ?? false,
      ageString(sc.metadata.creationTimestamp, now),
    ];
  },
  defaults(sc) {
    if (sc.reclaimPolicy === undefined || sc.reclaimPolicy === null) sc.reclaimPolicy = 'Delete';
    if (sc.volumeBindingMode === undefined || sc.volumeBindingMode === null) sc.volumeBindingMode = 'Immediate';
  },
  validateCreate: (sc) => validateStorageClass(sc),
  validateUpdate: (sc, old) => validateStorageClassUpdate(sc, old),
});
