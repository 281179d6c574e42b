import { posix } from 'node:path';

import type { FieldCause } from '../../util/errors.js';
import type { KubeObject, ResourceDef } from './types.js';
import {
  AGE_COLUMN,
  FIELD_IMMUTABLE,
  NAME_COLUMN,
  addFinalizer,
  ageString,
  arr,
  baseResourceDef,
  canonicalizeQuantities,
  column,
  ensureObject,
  forbidden,
  formatQuantity,
  invalid,
  nameIsDNSSubdomain,
  notSupported,
  obj,
  required,
  str,
  tooLong,
  tryParseQuantity,
  validateNodeSelector,
  validateObjectMeta,
  validateObjectMetaUpdate,
  validateWith,
  isDNS1123Subdomain,
  isDNS1123Label,
  QUANTITY_REGEX_TEXT,
  type JsonObject,
} from './common.js';
import {
  ANN_BETA_STORAGE_CLASS as BETA_STORAGE_CLASS_ANNOTATION,
  ANN_MOUNT_OPTIONS as MOUNT_OPTIONS_ANNOTATION,
  PV_PROTECTION_FINALIZER,
} from '../../kube/names.js';

import { volumeClass } from '../../kube/class.js';
import { jsonEqual } from '../../util/jsonequal.js';

export { BETA_STORAGE_CLASS_ANNOTATION };

export const ACCESS_MODES = ['ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOnce', 'ReadWriteOncePod'] as const;
export const PV_RECLAIM_POLICIES = ['Delete', 'Recycle', 'Retain'] as const;
export const VOLUME_MODES = ['Block', 'Filesystem'] as const;
const HOST_PATH_TYPES = [
  '',
  'BlockDevice',
  'CharDevice',
  'Directory',
  'DirectoryOrCreate',
  'File',
  'FileOrCreate',
  'Socket',
];

/**
 * The volume sources of a PersistentVolumeSpec in the order kube checks them, with the path kube
 * names in "may not specify more than 1 volume type" (some differ from the JSON name).
 */
const VOLUME_SOURCES: ReadonlyArray<readonly [json: string, errorName: string]> = [
  ['hostPath', 'hostPath'],
  ['gcePersistentDisk', 'gcePersistentDisk'],
  ['awsElasticBlockStore', 'awsElasticBlockStore'],
  ['glusterfs', 'glusterfs'],
  ['flocker', 'flocker'],
  ['nfs', 'nfs'],
  ['rbd', 'rbd'],
  ['quobyte', 'quobyte'],
  ['cephfs', 'cephFS'],
  ['iscsi', 'iscsi'],
  ['cinder', 'cinder'],
  ['fc', 'fc'],
  ['flexVolume', ''],
  ['azureFile', 'azureFile'],
  ['vsphereVolume', 'vsphereVolume'],
  ['photonPersistentDisk', 'photonPersistentDisk'],
  ['portworxVolume', 'portworxVolume'],
  ['azureDisk', 'azureDisk'],
  ['scaleIO', 'scaleIO'],
  ['local', 'local'],
  ['storageos', 'storageos'],
  ['csi', 'csi'],
];
export const PV_SOURCE_KEYS: readonly string[] = VOLUME_SOURCES.map(([k]) => k);

/** Volume types whose plugins accept the mount-options annotation. */
const MOUNT_OPTION_SOURCES = [
  'gcePersistentDisk',
  'awsElasticBlockStore',
  'glusterfs',
  'nfs',
  'rbd',
  'quobyte',
  'iscsi',
  'cinder',
  'cephfs',
  'azureFile',
  'vsphereVolume',
  'azureDisk',
  'photonPersistentDisk',
  'flocker',
  'scaleIO',
  'fc',
  'portworxVolume',
];

/** `helper.GetAccessModesAsString`: RWO, ROX, RWX, RWOP in that order, duplicates dropped. */
export function accessModesString(modes: unknown): string {
  const list = (arr(modes) ?? []).map(String);
  const out: string[] = [];
  if (list.includes('ReadWriteOnce')) out.push('RWO');
  if (list.includes('ReadOnlyMany')) out.push('ROX');
  if (list.includes('ReadWriteMany')) out.push('RWX');
  if (list.includes('ReadWriteOncePod')) out.push('RWOP');
  return out.join(',');
}

/** Canonical text of the quantity at `v` ("0" when absent, as a zero Quantity prints). */
export function quantityText(v: unknown): string {
  if (v === undefined || v === null) return '0';
  const q = tryParseQuantity(v);
  return q ? formatQuantity(q) : String(v);
}

/** Access modes: required (unless `optional`), each supported, ReadWriteOncePod alone. */
export function validateAccessModes(modes: unknown, field: string, requiredDetail: string | null): FieldCause[] {
  const out: FieldCause[] = [];
  const list = (arr(modes) ?? []).map((m) => (typeof m === 'string' ? m : String(m)));
  if (list.length === 0 && requiredDetail !== null) out.push(required(field, requiredDetail));
  let rwop = false;
  let other = false;
  for (const m of list) {
    const ok = (ACCESS_MODES as readonly string[]).includes(m);
    if (!ok) out.push(notSupported(field, m, ACCESS_MODES));
    if (m === 'ReadWriteOncePod') rwop = true;
    else if (ok) other = true;
  }
  if (rwop && other) out.push(forbidden(field, 'may not use ReadWriteOncePod with other access modes'));
  return out;
}

/** A quantity that must parse, be a valid resource quantity and (optionally) be > 0 or ≥ 0. */
export function validateQuantityField(
  v: unknown,
  field: string,
  sign: 'positive' | 'nonnegative' | 'any',
): FieldCause[] {
  const q = tryParseQuantity(v);
  if (!q) {
    return [
      invalid(
        field,
        typeof v === 'string' ? v : (JSON.stringify(v) ?? 'null'),
        `quantities must match the regular expression '${QUANTITY_REGEX_TEXT}'`,
      ),
    ];
  }
  const out: FieldCause[] = [];
  if (sign === 'positive' && q.nanos <= 0n) out.push(invalid(field, formatQuantity(q), 'must be greater than zero'));
  if (sign === 'nonnegative' && q.nanos < 0n)
    out.push(invalid(field, formatQuantity(q), 'must be greater than or equal to 0'));
  return out;
}

function validateBasicResource(v: unknown, field: string): FieldCause[] {
  const q = tryParseQuantity(v);
  if (q && q.nanos < 0n) {
    const value = q.nanos / 1_000_000_000n;
    return [invalid(field, value, 'must be a valid resource quantity')];
  }
  return [];
}

export function validateClassName(name: string, field: string): FieldCause[] {
  return nameIsDNSSubdomain(name, false).map((m) => invalid(field, name, m));
}

/** `ValidateCSIDriverName`: required, ≤ 63 characters, a DNS subdomain once lower-cased. */
export function validateCSIDriverName(name: string, field: string): FieldCause[] {
  const out: FieldCause[] = [];
  if (name.length === 0) out.push(required(field));
  if (name.length > 63) out.push(tooLong(field, 63));
  for (const m of isDNS1123Subdomain(name.toLowerCase())) out.push(invalid(field, name, m));
  return out;
}

function validatePathNoBacksteps(p: string, field: string): FieldCause[] {
  return p.split('/').includes('..') ? [invalid(field, p, "must not contain '..'")] : [];
}

function validateSecretRef(ref: unknown, field: string): FieldCause[] {
  const r = obj(ref) ?? {};
  const out: FieldCause[] = [];
  const name = str(r.name) ?? '';
  const ns = str(r.namespace) ?? '';
  if (!name) out.push(required(`${field}.name`));
  else out.push(...validateWith(isDNS1123Subdomain, name, `${field}.name`));
  if (!ns) out.push(required(`${field}.namespace`));
  else out.push(...validateWith(isDNS1123Label, ns, `${field}.namespace`));
  return out;
}

function validateSource(key: string, src: JsonObject, field: string): FieldCause[] {
  const out: FieldCause[] = [];
  const s = (k: string): string => str(src[k]) ?? '';
  switch (key) {
    case 'hostPath': {
      if (!s('path')) return [required(`${field}.path`)];
      out.push(...validatePathNoBacksteps(s('path'), `${field}.path`));
      const t = src.type;
      if (t !== undefined && t !== null && !HOST_PATH_TYPES.includes(String(t)))
        out.push(notSupported(`${field}.type`, String(t), HOST_PATH_TYPES));
      return out;
    }
    case 'nfs':
      if (!s('server')) out.push(required(`${field}.server`));
      if (!s('path')) out.push(required(`${field}.path`));
      if (!s('path').startsWith('/')) out.push(invalid(`${field}.path`, s('path'), 'must be an absolute path'));
      return out;
    case 'local':
      if (!s('path')) return [required(`${field}.path`)];
      return validatePathNoBacksteps(s('path'), `${field}.path`);
    case 'csi':
      out.push(...validateCSIDriverName(s('driver'), `${field}.driver`));
      if (!s('volumeHandle')) out.push(required(`${field}.volumeHandle`));
      for (const ref of [
        'controllerPublishSecretRef',
        'controllerExpandSecretRef',
        'nodePublishSecretRef',
        'nodeExpandSecretRef',
      ]) {
        if (obj(src[ref])) out.push(...validateSecretRef(src[ref], `${field}.${ref}`));
      }
      return out;
    case 'flexVolume':
      if (!s('driver')) out.push(required(`${field}.driver`));
      return out;
    case 'iscsi':
      if (!s('targetPortal')) out.push(required(`${field}.targetPortal`));
      if (!s('iqn')) out.push(required(`${field}.iqn`));
      return out;
    case 'rbd':
      if (!(arr(src.monitors) ?? []).length) out.push(required(`${field}.monitors`));
      if (!s('image')) out.push(required(`${field}.image`));
      return out;
    case 'fc': {
      const wwids = arr(src.wwids) ?? [];
      const targets = arr(src.targetWWNs) ?? [];
      if (targets.length === 0 && wwids.length === 0)
        out.push(required(`${field}.targetWWNs`, 'must specify either targetWWNs or wwids, but not both'));
      return out;
    }
    default:
      return out;
  }
}

/**
 * `ValidatePersistentVolumeSpec`. `inline` is the VolumeAttachment inlineVolumeSpec variant
 * (no capacity/claimRef/nodeAffinity/class, CSI only, Retain only).
 */
export function validatePersistentVolumeSpec(specIn: unknown, field: string, inline: boolean): FieldCause[] {
  const spec = obj(specIn) ?? {};
  const out: FieldCause[] = [];
  const inlineForbidden = 'may not be specified in the context of inline volumes';
  if (inline) {
    if (spec.claimRef !== undefined && spec.claimRef !== null)
      out.push(forbidden(`${field}.claimRef`, inlineForbidden));
    if (Object.keys(obj(spec.capacity) ?? {}).length) out.push(forbidden(`${field}.capacity`, inlineForbidden));
    if (!obj(spec.csi)) out.push(required(`${field}.csi`, 'has to be specified in the context of inline volumes'));
  }
  out.push(...validateAccessModes(spec.accessModes, `${field}.accessModes`, ''));

  if (!inline) {
    const capacity = obj(spec.capacity) ?? {};
    const keys = Object.keys(capacity);
    if (keys.length === 0) out.push(required(`${field}.capacity`));
    if (!('storage' in capacity) || keys.length > 1) {
      const rendered = `core.ResourceList{${keys.map((k) => `${JSON.stringify(k)}:${JSON.stringify(capacity[k])}`).join(', ')}}`;
      out.push(notSupported(`${field}.capacity`, { rendered }, ['storage']));
    }
    for (const k of keys) {
      out.push(...validateBasicResource(capacity[k], `${field}.capacity[${k}]`));
      out.push(...validateQuantityField(capacity[k], `${field}.capacity[${k}]`, 'positive'));
    }
  }

  const policy = str(spec.persistentVolumeReclaimPolicy) ?? '';
  if (policy) {
    if (inline) {
      if (policy !== 'Retain')
        out.push(
          forbidden(`${field}.persistentVolumeReclaimPolicy`, 'may only be Retain in the context of inline volumes'),
        );
    } else if (!(PV_RECLAIM_POLICIES as readonly string[]).includes(policy)) {
      out.push(notSupported(`${field}.persistentVolumeReclaimPolicy`, policy, PV_RECLAIM_POLICIES));
    }
  }

  let nodeAffinitySpecified = false;
  const nodeAffinity = spec.nodeAffinity;
  if (nodeAffinity !== undefined && nodeAffinity !== null) {
    if (inline) out.push(forbidden(`${field}.nodeAffinity`, inlineForbidden));
    else {
      nodeAffinitySpecified = true;
      const req = obj(nodeAffinity)?.required;
      if (req !== undefined && req !== null) out.push(...validateNodeSelector(req, `${field}.nodeAffinity.required`));
      else out.push(required(`${field}.nodeAffinity.required`, 'must specify required node constraints'));
    }
  }

  let numVolumes = 0;
  for (const [key, errorName] of VOLUME_SOURCES) {
    const src = spec[key];
    if (src === undefined || src === null) continue;
    if (numVolumes > 0 && errorName) {
      out.push(forbidden(`${field}.${errorName}`, 'may not specify more than 1 volume type'));
      continue;
    }
    numVolumes++;
    const srcPath = key === 'gcePersistentDisk' ? `${field}.persistentDisk` : `${field}.${key}`;
    out.push(...validateSource(key, obj(src) ?? {}, srcPath));
    if (key === 'local' && !nodeAffinitySpecified)
      out.push(required(`${field}.nodeAffinity`, 'Local volume requires node affinity'));
  }
  if (numVolumes === 0) out.push(required(field, 'must specify a volume type'));

  const hostPath = obj(spec.hostPath);
  if (hostPath && posix.normalize(str(hostPath.path) || '.') === '/' && policy === 'Recycle') {
    out.push(forbidden(`${field}.persistentVolumeReclaimPolicy`, "may not be 'recycle' for a hostPath mount of '/'"));
  }

  const className = str(spec.storageClassName) ?? '';
  if (className) {
    if (inline) out.push(forbidden(`${field}.storageClassName`, inlineForbidden));
    else out.push(...validateClassName(className, `${field}.storageClassName`));
  }
  const mode = spec.volumeMode;
  if (mode !== undefined && mode !== null) {
    if (inline) {
      if (mode !== 'Filesystem')
        out.push(
          forbidden(
            `${field}.volumeMode`,
            'may not specify volumeMode other than Filesystem in the context of inline volumes',
          ),
        );
    } else if (!(VOLUME_MODES as readonly string[]).includes(String(mode))) {
      out.push(notSupported(`${field}.volumeMode`, String(mode), VOLUME_MODES));
    }
  }
  return out;
}

function validateMountOptionsAnnotation(pv: KubeObject): FieldCause[] {
  const spec = obj(pv.spec) ?? {};
  if (MOUNT_OPTION_SOURCES.some((k) => spec[k] !== undefined && spec[k] !== null)) return [];
  if (pv.metadata.annotations?.[MOUNT_OPTIONS_ANNOTATION] === undefined) return [];
  return [
    forbidden(`metadata.annotations.${MOUNT_OPTIONS_ANNOTATION}`, 'may not specify mount options for this volume type'),
  ];
}

function validatePV(pv: KubeObject): FieldCause[] {
  return [
    ...validateObjectMeta(pv.metadata, { namespaced: false }),
    ...validatePersistentVolumeSpec(pv.spec, 'spec', false),
    ...validateMountOptionsAnnotation(pv),
  ];
}

/** The volume source part of a spec, for the immutability check (and its diff). */
function volumeSource(spec: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const k of PV_SOURCE_KEYS) if (spec[k] !== undefined && spec[k] !== null) out[k] = spec[k];
  return out;
}

/** A small stand-in for cmp.Diff: one -/+ pair per changed source. */
function sourceDiff(oldSrc: JsonObject, newSrc: JsonObject): string {
  const lines = ['  core.PersistentVolumeSource{'];
  for (const k of PV_SOURCE_KEYS) {
    if (jsonEqual(oldSrc[k], newSrc[k])) continue;
    if (oldSrc[k] !== undefined) lines.push(`- \t${k}: ${JSON.stringify(oldSrc[k])},`);
    if (newSrc[k] !== undefined) lines.push(`+ \t${k}: ${JSON.stringify(newSrc[k])},`);
  }
  lines.push('  }');
  return `${lines.join('\n')}\n`;
}

function validatePVUpdate(pv: KubeObject, old: KubeObject): FieldCause[] {
  const out = [...validateObjectMetaUpdate(pv.metadata, old.metadata), ...validatePV(pv)];
  const spec = obj(pv.spec) ?? {};
  const oldSpec = obj(old.spec) ?? {};
  const newSrc = structuredClone(volumeSource(spec));
  const oldSrc = volumeSource(oldSpec);
  // A CSI volume may gain a controllerExpandSecretRef after creation (for resizing old volumes).
  const newCsi = obj(newSrc.csi);
  const oldCsi = obj(oldSrc.csi);
  if (newCsi && oldCsi && oldCsi.controllerExpandSecretRef === undefined) delete newCsi.controllerExpandSecretRef;
  if (!jsonEqual(newSrc, oldSrc)) {
    out.push(
      forbidden(
        'spec.persistentvolumesource',
        `spec.persistentvolumesource is immutable after creation\n${sourceDiff(oldSrc, newSrc)}`,
      ),
    );
  }
  if (!jsonEqual(spec.volumeMode ?? null, oldSpec.volumeMode ?? null)) {
    out.push(invalid('volumeMode', (spec.volumeMode as string | undefined) ?? null, FIELD_IMMUTABLE));
  }
  if (
    oldSpec.nodeAffinity !== undefined &&
    oldSpec.nodeAffinity !== null &&
    !jsonEqual(spec.nodeAffinity ?? null, oldSpec.nodeAffinity)
  ) {
    out.push(
      invalid(
        'nodeAffinity',
        spec.nodeAffinity ?? null,
        `${FIELD_IMMUTABLE}, except for updating from beta label to GA`,
      ),
    );
  }
  return out;
}

function setDefaults(pv: KubeObject): void {
  const spec = ensureObject(pv, 'spec');
  canonicalizeQuantities(spec.capacity);
  if (!spec.persistentVolumeReclaimPolicy) spec.persistentVolumeReclaimPolicy = 'Retain';
  if (spec.volumeMode === undefined || spec.volumeMode === null) spec.volumeMode = 'Filesystem';
  const hostPath = obj(spec.hostPath);
  if (hostPath && (hostPath.type === undefined || hostPath.type === null)) hostPath.type = '';
  const status = obj(pv.status);
  if (status && !status.phase) status.phase = 'Pending';
}

/** VolumeAttributesClass is alpha (off) in 1.30: the field is dropped unless already in use. */
function dropDisabledSpecFields(pv: KubeObject, old?: KubeObject): void {
  const spec = obj(pv.spec);
  const oldSpec = obj(old?.spec);
  if (spec && (oldSpec?.volumeAttributesClassName === undefined || oldSpec.volumeAttributesClassName === null)) {
    delete spec.volumeAttributesClassName;
  }
}

export const persistentVolumeResource: ResourceDef = baseResourceDef({
  group: '',
  version: 'v1',
  kind: 'PersistentVolume',
  plural: 'persistentvolumes',
  namespaced: false,
  hasStatus: true,
  shortNames: ['pv'],
  // Kubernetes keeps a bare `name` selector for backward compatibility.
  fieldSelectors: { name: (o) => o.metadata.name ?? '' },
  columns: [
    NAME_COLUMN,
    column(
      'Capacity',
      'string',
      "capacity is the description of the persistent volume's resources and capacity. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#capacity",
    ),
    column(
      'Access Modes',
      'string',
      'accessModes contains all ways the volume can be mounted. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#access-modes',
    ),
    column(
      'Reclaim Policy',
      'string',
      'persistentVolumeReclaimPolicy defines what happens to a persistent volume when released from its claim. Valid options are Retain (default for manually created PersistentVolumes), Delete (default for dynamically provisioned PersistentVolumes), and Recycle (deprecated). Recycle must be supported by the volume plugin underlying this PersistentVolume. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#reclaiming',
    ),
    column(
      'Status',
      'string',
      'phase indicates if a volume is available, bound to a claim, or released by a claim. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#phase',
    ),
    column(
      'Claim',
      'string',
      'claimRef is part of a bi-directional binding between PersistentVolume and PersistentVolumeClaim. Expected to be non-nil when bound. claim.VolumeName is the authoritative bind between PV and PVC. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#binding',
    ),
    column('StorageClass', 'string', 'StorageClass of the pv'),
    column('VolumeAttributesClass', 'string', 'VolumeAttributesClass of the pv'),
    column(
      'Reason',
      'string',
      'reason is a brief CamelCase string that describes any failure and is meant for machine parsing and tidy display in the CLI.',
    ),
    AGE_COLUMN,
    column(
      'VolumeMode',
      'string',
      'volumeMode defines if a volume is intended to be used with a formatted filesystem or to remain in raw block state. Value of Filesystem is implied when not included in spec.',
      1,
    ),
  ],
  row(pv, now) {
    const spec = obj(pv.spec) ?? {};
    const status = obj(pv.status) ?? {};
    const claimRef = obj(spec.claimRef);
    const claim = claimRef ? `${str(claimRef.namespace) ?? ''}/${str(claimRef.name) ?? ''}` : '';
    const phase = pv.metadata.deletionTimestamp ? 'Terminating' : (str(status.phase) ?? '');
    return [
      pv.metadata.name ?? '',
      quantityText(obj(spec.capacity)?.storage),
      accessModesString(spec.accessModes),
      str(spec.persistentVolumeReclaimPolicy) ?? '',
      phase,
      claim,
      volumeClass(pv),
      str(spec.volumeAttributesClassName) ?? '<unset>',
      str(status.reason) ?? '',
      ageString(pv.metadata.creationTimestamp, now),
      str(spec.volumeMode) ?? '<unset>',
    ];
  },
  defaults: setDefaults,
  prepareForCreate(pv, ctx) {
    // Status is the controller's: a new volume starts Pending, stamped with its transition time.
    pv.status = { phase: 'Pending', lastPhaseTransitionTime: ctx.now };
    dropDisabledSpecFields(pv);
  },
  mutatingAdmission(pv, old) {
    // StorageObjectInUseProtection: on create only.
    if (!old) addFinalizer(pv, PV_PROTECTION_FINALIZER);
  },
  prepareForUpdate(pv, old) {
    dropDisabledSpecFields(pv, old);
  },
  prepareForStatusUpdate(pv, old, ctx) {
    const status = ensureObject(pv, 'status');
    const oldStatus = obj(old.status) ?? {};
    const t = status.lastPhaseTransitionTime;
    if (status.phase === oldStatus.phase) {
      if (t === undefined || t === null) {
        if (oldStatus.lastPhaseTransitionTime === undefined) delete status.lastPhaseTransitionTime;
        else status.lastPhaseTransitionTime = oldStatus.lastPhaseTransitionTime;
      }
    } else if (t === undefined || t === null || t === oldStatus.lastPhaseTransitionTime) {
      // The phase changed and the writer did not stamp a new time: the server does.
      status.lastPhaseTransitionTime = ctx.now;
    }
  },
  validateCreate: (pv) => validatePV(pv),
  validateUpdate: (pv, old) => validatePVUpdate(pv, old),
  validateStatusUpdate: (pv, old) => validateObjectMetaUpdate(pv.metadata, old.metadata),
});
