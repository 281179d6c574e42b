import type { FieldCause } from '../../util/errors.js';
import type { KubeObject, ResourceDef } from './types.js';
import {
  AGE_COLUMN,
  FIELD_IMMUTABLE,
  NAME_COLUMN,
  ageString,
  arr,
  baseResourceDef,
  column,
  duplicate,
  invalid,
  isQualifiedName,
  obj,
  required,
  str,
  validateObjectMeta,
  validateObjectMetaUpdate,
} from './common.js';
import { validateCSIDriverName } from './persistentvolume.js';
import { jsonEqual } from '../../util/jsonequal.js';

/** The strategy validates with AllowLongNodeID, so node IDs may have up to 256 characters. */
export const CSI_NODE_ID_MAX_LENGTH = 256;

function validateDrivers(drivers: unknown): FieldCause[] {
  const out: FieldCause[] = [];
  const names = new Set<string>();
  (arr(drivers) ?? []).forEach((d, i) => {
    const p = `spec.drivers[${i}]`;
    const drv = obj(d) ?? {};
    const name = str(drv.name) ?? '';
    out.push(...validateCSIDriverName(name, `${p}.name`));
    const nodeID = str(drv.nodeID) ?? '';
    if (!nodeID) out.push(required(`${p}.nodeID`));
    if (nodeID.length > CSI_NODE_ID_MAX_LENGTH)
      out.push(invalid(`${p}.nodeID`, nodeID, `must be ${CSI_NODE_ID_MAX_LENGTH} characters or less`));
    const count = obj(drv.allocatable)?.count;
    if (typeof count === 'number' && count < 0)
      out.push(invalid(`${p}.allocatable.count`, count, 'must be greater than or equal to 0'));
    if (names.has(name)) out.push(duplicate(`${p}.name`, name));
    names.add(name);
    const keys = new Set<string>();
    const topologyKeys = (arr(drv.topologyKeys) ?? []).map((k) => (typeof k === 'string' ? k : ''));
    // v1.30 reports the whole key list as the bad value of a malformed key.
    const rendered = { rendered: `[]string{${topologyKeys.map((k) => JSON.stringify(k)).join(', ')}}` };
    for (const key of topologyKeys) {
      if (!key) out.push(required(p));
      if (keys.has(key)) out.push(duplicate(p, key));
      keys.add(key);
      for (const m of isQualifiedName(key)) out.push(invalid(p, rendered, m));
    }
  });
  return out;
}

function validateCSINode(n: KubeObject): FieldCause[] {
  return [...validateObjectMeta(n.metadata, { namespaced: false }), ...validateDrivers(obj(n.spec)?.drivers)];
}

/** An existing driver entry is immutable; drivers may be added and removed. */
function validateCSINodeUpdate(n: KubeObject, old: KubeObject): FieldCause[] {
  const out = [...validateObjectMetaUpdate(n.metadata, old.metadata), ...validateCSINode(n)];
  const newDrivers = (arr(obj(n.spec)?.drivers) ?? []).map((d) => obj(d) ?? {});
  for (const od of arr(obj(old.spec)?.drivers) ?? []) {
    const oldDriver = obj(od) ?? {};
    for (const nd of newDrivers) {
      if (nd.name === oldDriver.name && !jsonEqual(nd, oldDriver))
        out.push(invalid('CSINodeDriver', nd, FIELD_IMMUTABLE));
    }
  }
  return out;
}

export const csiNodeResource: ResourceDef = baseResourceDef({
  group: 'storage.k8s.io',
  version: 'v1',
  kind: 'CSINode',
  plural: 'csinodes',
  namespaced: false,
  hasStatus: false,
  columns: [
    NAME_COLUMN,
    column('Drivers', 'integer', 'Drivers indicates the number of CSI drivers registered on the node'),
    AGE_COLUMN,
  ],
  row: (n, now) => [
    n.metadata.name ?? '',
    (arr(obj(n.spec)?.drivers) ?? []).length,
    ageString(n.metadata.creationTimestamp, now),
  ],
  validateCreate: (n) => validateCSINode(n),
  validateUpdate: (n, old) => validateCSINodeUpdate(n, old),
});
