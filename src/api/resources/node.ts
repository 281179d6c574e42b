import type { FieldCause } from '../../util/errors.js';
import { patchMetaFor, schemaFor } from '../openapi/schemas.js';
import { keepSpec, keepStatus, listAt, objectAt, strAt } from './corehelpers.js';
import { forbidden, invalid, notSupported, required } from './fielderrors.js';
import { isQualifiedName, nameIsDNSSubdomain, validateObjectMeta, validateObjectMetaUpdate } from './names.js';
import { age, ageColumn, column, fieldDoc, nameColumn } from './printing.js';
import type { KubeObject, ResourceDef } from './types.js';

export const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'] as const;
const ROLE_LABEL_PREFIX = 'node-role.kubernetes.io/';
const ROLE_LABEL = 'kubernetes.io/role';

/** kubectl's node STATUS: Ready / NotReady / Unknown, plus SchedulingDisabled when cordoned. */
function nodeStatus(o: KubeObject): string {
  const ready = listAt(objectAt(o, 'status'), 'conditions').find((c) => c.type === 'Ready');
  const status = [ready ? (ready.status === 'True' ? 'Ready' : 'NotReady') : 'Unknown'];
  if (objectAt(o, 'spec')?.unschedulable === true) status.push('SchedulingDisabled');
  return status.join(',');
}

/** Roles from `node-role.kubernetes.io/<role>` keys and the `kubernetes.io/role` value, sorted. */
function nodeRoles(o: KubeObject): string {
  const roles = new Set<string>();
  for (const [k, v] of Object.entries(o.metadata.labels ?? {})) {
    if (k.startsWith(ROLE_LABEL_PREFIX) && k.length > ROLE_LABEL_PREFIX.length)
      roles.add(k.slice(ROLE_LABEL_PREFIX.length));
    else if (k === ROLE_LABEL && v !== '') roles.add(v);
  }
  return roles.size ? [...roles].sort().join(',') : '<none>';
}

function address(o: KubeObject, type: string): string {
  const a = listAt(objectAt(o, 'status'), 'addresses').find((x) => x.type === type);
  return a ? strAt(a, 'address') : '<none>';
}

function nodeInfo(o: KubeObject, key: string): string {
  return strAt(objectAt(objectAt(o, 'status'), 'nodeInfo'), key);
}
const orUnknown = (s: string): string => s || '<unknown>';

function validateSpec(obj: KubeObject): FieldCause[] {
  const out: FieldCause[] = [];
  listAt(obj.spec, 'taints').forEach((t, i) => {
    const p = `spec.taints[${i}]`;
    const key = strAt(t, 'key');
    if (!key) out.push(required(`${p}.key`));
    else for (const m of isQualifiedName(key)) out.push(invalid(`${p}.key`, key, m));
    const effect = strAt(t, 'effect');
    if (!effect) out.push(required(`${p}.effect`));
    else if (!(TAINT_EFFECTS as readonly string[]).includes(effect))
      out.push(notSupported(`${p}.effect`, effect, TAINT_EFFECTS));
  });
  return out;
}

export const nodeResource: ResourceDef = {
  group: '',
  version: 'v1',
  kind: 'Node',
  listKind: 'NodeList',
  plural: 'nodes',
  singular: 'node',
  namespaced: false,
  shortNames: ['no'],
  categories: [],
  hasStatus: true,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  schema: schemaFor('', 'v1', 'Node'),
  fieldSelectors: {
    'spec.unschedulable': (o) => String(objectAt(o, 'spec')?.unschedulable === true),
  },
  columns: [
    nameColumn(),
    column('Status', 'The status of the node'),
    column('Roles', 'The roles of the node'),
    ageColumn(),
    column('Version', fieldDoc('', 'Node', ['status', 'nodeInfo', 'kubeletVersion'])),
    column('Internal-IP', fieldDoc('', 'Node', ['status', 'addresses']), { wide: true }),
    column('External-IP', fieldDoc('', 'Node', ['status', 'addresses']), { wide: true }),
    column('OS-Image', fieldDoc('', 'Node', ['status', 'nodeInfo', 'osImage']), { wide: true }),
    column('Kernel-Version', fieldDoc('', 'Node', ['status', 'nodeInfo', 'kernelVersion']), { wide: true }),
    column('Container-Runtime', fieldDoc('', 'Node', ['status', 'nodeInfo', 'containerRuntimeVersion']), {
      wide: true,
    }),
  ],
  row: (o, now) => [
    o.metadata.name ?? '',
    nodeStatus(o),
    nodeRoles(o),
    age(o, now),
    nodeInfo(o, 'kubeletVersion'),
    address(o, 'InternalIP'),
    address(o, 'ExternalIP'),
    orUnknown(nodeInfo(o, 'osImage')),
    orUnknown(nodeInfo(o, 'kernelVersion')),
    orUnknown(nodeInfo(o, 'containerRuntimeVersion')),
  ],

  // Nodes may set status on create (the kubelet registers itself with it).
  prepareForCreate() {},
  prepareForUpdate(obj, old) {
    keepStatus(obj, old);
  },
  prepareForStatusUpdate(obj, old) {
    keepSpec(obj, old);
  },
  validateCreate(obj) {
    return [
      ...validateObjectMeta(obj.metadata, { namespaced: false, nameFn: nameIsDNSSubdomain }),
      ...validateSpec(obj),
    ];
  },
  validateUpdate(obj, old) {
    const out = [...validateObjectMetaUpdate(obj.metadata, old.metadata), ...validateSpec(obj)];
    // podCIDR(s) and providerID may be set once, never changed.
    const spec = objectAt(obj, 'spec');
    const oldSpec = objectAt(old, 'spec');
    const oldCidr = strAt(oldSpec, 'podCIDR');
    if (oldCidr && strAt(spec, 'podCIDR') !== oldCidr)
      out.push(forbidden('spec.podCIDRs', 'node updates may not change podCIDR except from "" to valid'));
    const oldProvider = strAt(oldSpec, 'providerID');
    if (oldProvider && strAt(spec, 'providerID') !== oldProvider) {
      out.push(forbidden('spec.providerID', 'node updates may not change providerID except from "" to valid'));
    }
    return out;
  },
  validateStatusUpdate(obj, old) {
    return validateObjectMetaUpdate(obj.metadata, old.metadata);
  },
  patchMeta: patchMetaFor('', 'v1', 'Node'),
};
