import type { FieldCause } from '../../util/errors.js';
import { forbidden as forbiddenStatus } from '../status.js';

import type { AdmissionContext, KubeObject, ResourceDef } from './types.js';
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
  compareQuantities,
  ensureObject,
  forbidden,
  invalid,
  isDNS1123Subdomain,
  isQualifiedName,
  nameIsDNSLabel,
  notSupported,
  obj,
  required,
  str,
  tryParseQuantity,
  validateLabelSelector,
  validateObjectMeta,
  validateObjectMetaUpdate,
  validateWith,
  type JsonObject,
  type Quantity,
} from './common.js';
import {
  BETA_STORAGE_CLASS_ANNOTATION,
  VOLUME_MODES,
  accessModesString,
  quantityText,
  validateAccessModes,
  validateClassName,
  validateQuantityField,
} from './persistentvolume.js';

import { isDefaultStorageClass } from '../../kube/class.js';

import { claimClass, claimHasClass } from '../../kube/class.js';

import { PVC_PROTECTION_FINALIZER } from '../../kube/names.js';
import { jsonEqual } from '../../util/jsonequal.js';

/** allocatedResourceStatuses values at v1.30. */
const RESIZE_STATUSES = [
  'ControllerResizeFailed',
  'ControllerResizeInProgress',
  'NodeResizeFailed',
  'NodeResizeInProgress',
  'NodeResizePending',
];

/**
 * The default StorageClass (`storageclass.kubernetes.io/is-default-class: "true"`, or the beta
 * annotation). Since 1.26 several defaults are tolerated: the newest wins, then the lowest name.
 */
export function pickDefaultStorageClass(classes: readonly KubeObject[]): KubeObject | undefined {
  const defaults = classes.filter(isDefaultStorageClass);
  defaults.sort((a, b) => {
    const ta = Date.parse(a.metadata.creationTimestamp ?? '') || 0;
    const tb = Date.parse(b.metadata.creationTimestamp ?? '') || 0;
    if (ta !== tb) return tb - ta;
    const na = a.metadata.name ?? '';
    const nb = b.metadata.name ?? '';
    return na < nb ? -1 : na > nb ? 1 : 0;
  });
  return defaults[0];
}

function storageRequest(pvc: KubeObject): Quantity | undefined {
  return tryParseQuantity(obj(obj(obj(pvc.spec)?.resources)?.requests)?.storage);
}

function hasAllocated(pvc: KubeObject): { resources: boolean; statuses: boolean } {
  const status = obj(pvc.status) ?? {};
  return {
    resources: Object.keys(obj(status.allocatedResources) ?? {}).length > 0,
    statuses: Object.keys(obj(status.allocatedResourceStatuses) ?? {}).length > 0,
  };
}

function validateDataSource(ds: JsonObject, field: string, withNamespace: boolean): FieldCause[] {
  const out: FieldCause[] = [];
  const name = str(ds.name) ?? '';
  const kind = str(ds.kind) ?? '';
  const apiGroup = str(ds.apiGroup) ?? '';
  if (!name) out.push(required(`${field}.name`));
  if (!kind) out.push(required(`${field}.kind`));
  if (!apiGroup && kind !== 'PersistentVolumeClaim') {
    out.push(invalid(field, kind, "must be 'PersistentVolumeClaim' when referencing the default apiGroup"));
  }
  if (apiGroup) out.push(...validateWith(isDNS1123Subdomain, apiGroup, `${field}.apiGroup`));
  const ns = str(ds.namespace) ?? '';
  if (withNamespace && ns) {
    for (const m of nameIsDNSLabel(ns, false)) out.push(invalid(`${field}.namespace`, ns, m));
  }
  return out;
}

/** `ValidatePersistentVolumeClaimSpec`. */
export function validateClaimSpec(specIn: unknown, field: string): FieldCause[] {
  const spec = obj(specIn) ?? {};
  const out: FieldCause[] = [];
  const modes = arr(spec.accessModes) ?? [];
  if (modes.length === 0) out.push(required(`${field}.accessModes`, 'at least 1 access mode is required'));
  if (obj(spec.selector)) out.push(...validateLabelSelector(spec.selector, `${field}.selector`));
  out.push(...validateAccessModes(modes, `${field}.accessModes`, null));

  const storagePath = `${field}.resources[storage]`;
  const requests = obj(obj(spec.resources)?.requests) ?? {};
  if (requests.storage === undefined || requests.storage === null) out.push(required(storagePath));
  else out.push(...validateQuantityField(requests.storage, storagePath, 'positive'));

  const sc = str(spec.storageClassName) ?? '';
  if (sc) out.push(...validateClassName(sc, `${field}.storageClassName`));
  const mode = spec.volumeMode;
  if (mode !== undefined && mode !== null && !(VOLUME_MODES as readonly string[]).includes(String(mode))) {
    out.push(notSupported(`${field}.volumeMode`, String(mode), VOLUME_MODES));
  }
  const ds = obj(spec.dataSource);
  const dsRef = obj(spec.dataSourceRef);
  if (ds) out.push(...validateDataSource(ds, `${field}.dataSource`, false));
  if (dsRef) out.push(...validateDataSource(dsRef, `${field}.dataSourceRef`, true));
  if (dsRef && str(dsRef.namespace)) {
    if (ds)
      out.push(
        invalid(
          field,
          { rendered: `${field}.dataSource` },
          'may not be specified when dataSourceRef.namespace is specified',
        ),
      );
  } else if (ds && dsRef) {
    const same = (ds.apiGroup ?? null) === (dsRef.apiGroup ?? null) && ds.kind === dsRef.kind && ds.name === dsRef.name;
    if (!same) out.push(invalid(field, { rendered: `${field}.dataSource` }, 'must match dataSourceRef'));
  }
  return out;
}

function validatePVC(pvc: KubeObject): FieldCause[] {
  return [...validateObjectMeta(pvc.metadata, { namespaced: true }), ...validateClaimSpec(pvc.spec, 'spec')];
}

function specDiff(oldSpec: JsonObject, newSpec: JsonObject): string {
  const keys = [...new Set([...Object.keys(oldSpec), ...Object.keys(newSpec)])];
  const lines = ['  core.PersistentVolumeClaimSpec{'];
  for (const k of keys) {
    if (jsonEqual(oldSpec[k], newSpec[k])) continue;
    if (oldSpec[k] !== undefined) lines.push(`- \t${k}: ${JSON.stringify(oldSpec[k])},`);
    if (newSpec[k] !== undefined) lines.push(`+ \t${k}: ${JSON.stringify(newSpec[k])},`);
  }
  lines.push('  }');
  return `${lines.join('\n')}\n`;
}

function validatePVCUpdate(pvc: KubeObject, old: KubeObject): FieldCause[] {
  const out = [...validateObjectMetaUpdate(pvc.metadata, old.metadata), ...validatePVC(pvc)];
  const newSpec = structuredClone(obj(pvc.spec) ?? {});
  const oldSpec = structuredClone(obj(old.spec) ?? {});
  const oldAnn = old.metadata.annotations ?? {};
  const newAnn = pvc.metadata.annotations ?? {};
  const isNil = (v: unknown): boolean => v === undefined || v === null;

  // The binder sets volumeName once.
  if (!str(oldSpec.volumeName)) {
    if (newSpec.volumeName === undefined) delete oldSpec.volumeName;
    else oldSpec.volumeName = newSpec.volumeName;
  }
  const beta = BETA_STORAGE_CLASS_ANNOTATION;
  const fromAnnotation =
    beta in oldAnn &&
    isNil(oldSpec.storageClassName) &&
    !isNil(newSpec.storageClassName) &&
    newSpec.storageClassName === oldAnn[beta] &&
    (!(beta in newAnn) || newAnn[beta] === oldAnn[beta]);
  if (fromAnnotation) {
    delete newSpec.storageClassName;
  } else {
    if ((newAnn[beta] ?? '') !== (oldAnn[beta] ?? ''))
      out.push(invalid(`metadata.annotations.${beta}`, newAnn[beta] ?? '', FIELD_IMMUTABLE));
    // A class may be set once on a claim that had none (retroactive default StorageClass).
    const fromNil =
      !isNil(newSpec.storageClassName) &&
      isNil(oldSpec.storageClassName) &&
      (!(beta in oldAnn) || newSpec.storageClassName === oldAnn[beta]);
    if (fromNil) delete newSpec.storageClassName;
  }
  const bound = str(obj(pvc.status)?.phase) === 'Bound';
  const newRequests = obj(obj(newSpec.resources)?.requests);
  if (bound && newRequests) {
    const oldStorage = obj(obj(oldSpec.resources)?.requests)?.storage;
    if (oldStorage === undefined) delete newRequests.storage;
    else newRequests.storage = oldStorage;
  }
  if (bound && !isNil(newSpec.volumeAttributesClassName))
    newSpec.volumeAttributesClassName = oldSpec.volumeAttributesClassName;
  if (!jsonEqual(newSpec, oldSpec)) {
    out.push(
      forbidden(
        'spec',
        `spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n${specDiff(oldSpec, newSpec)}`,
      ),
    );
  }

  const oldSize = storageRequest(old);
  const newSize = storageRequest(pvc);
  if (oldSize && newSize && compareQuantities(newSize, oldSize) < 0) {
    const recover = hasAllocated(old);
    if (!recover.resources && !recover.statuses) {
      out.push(forbidden('spec.resources.requests.storage', 'field can not be less than previous value'));
    } else {
      const statusSize = tryParseQuantity(obj(obj(old.status)?.capacity)?.storage) ?? {
        nanos: 0n,
        format: 'DecimalSI' as const,
      };
      if (compareQuantities(newSize, statusSize) <= 0) {
        out.push(forbidden('spec.resources.requests.storage', 'field can not be less than status.capacity'));
      }
    }
  }
  const newMode = obj(pvc.spec)?.volumeMode ?? null;
  if (!jsonEqual(newMode, obj(old.spec)?.volumeMode ?? null))
    out.push(invalid('volumeMode', newMode as string | null, FIELD_IMMUTABLE));
  return out;
}

/**
 * The PersistentVolumeClaimResize admission plugin: growing a claim needs a bound claim whose
 * StorageClass (unchanged, non-empty) has `allowVolumeExpansion: true`. Refusals are 403s with
 * kube's message (`persistentvolumeclaims "c" is forbidden: ...`).
 */
export function checkResize(pvc: KubeObject, old: KubeObject, ctx: AdmissionContext): void {
  const oldSize = storageRequest(old) ?? { nanos: 0n, format: 'DecimalSI' as const };
  const newSize = storageRequest(pvc) ?? { nanos: 0n, format: 'DecimalSI' as const };
  if (compareQuantities(newSize, oldSize) <= 0) return;
  const name = pvc.metadata.name ?? '';
  const refuse = (why: string): never => {
    throw forbiddenStatus(`persistentvolumeclaims ${JSON.stringify(name)} is forbidden: ${why}`, {
      group: '',
      resource: 'persistentvolumeclaims',
      name,
    });
  };
  if (str(obj(old.status)?.phase) !== 'Bound') refuse('Only bound persistent volume claims can be expanded');
  const cls = claimClass(pvc);
  const oldCls = claimClass(old);
  let allowed = false;
  if (cls && oldCls && cls === oldCls) {
    const sc = ctx.get('StorageClass', cls);
    allowed = sc?.allowVolumeExpansion === true;
  }
  if (!allowed)
    refuse(
      'only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize',
    );
}

function validateResourceKey(key: string, field: string): FieldCause[] {
  const errs = validateWith(isQualifiedName, key, field);
  if (errs.length) return errs;
  const native = !key.includes('/') || key.includes('kubernetes.io/');
  return native && key !== 'storage' ? [notSupported(field, key, ['storage'])] : [];
}

function validatePVCStatusUpdate(pvc: KubeObject, old: KubeObject): FieldCause[] {
  const out = validateObjectMetaUpdate(pvc.metadata, old.metadata);
  if (!(arr(obj(pvc.spec)?.accessModes) ?? []).length) out.push(required('Spec.accessModes'));
  const status = obj(pvc.status) ?? {};
  for (const [k, v] of Object.entries(obj(status.capacity) ?? {})) {
    const q = tryParseQuantity(v);
    if (!q) out.push(...validateQuantityField(v, `status.capacity[${k}]`, 'any'));
    else if (q.nanos < 0n)
      out.push(invalid(`status.capacity[${k}]`, q.nanos / 1_000_000_000n, 'must be a valid resource quantity'));
  }
  {
    const statusPath = 'status.allocatedResourceStatus';
    for (const [k, v] of Object.entries(obj(status.allocatedResourceStatuses) ?? {})) {
      out.push(...validateResourceKey(k, statusPath));
      if (!RESIZE_STATUSES.includes(String(v))) out.push(notSupported(statusPath, k, RESIZE_STATUSES));
    }
    const allocPath = 'status.allocatedResources';
    for (const [k, v] of Object.entries(obj(status.allocatedResources) ?? {})) {
      const keyErrs = validateResourceKey(k, allocPath);
      if (keyErrs.length) {
        out.push(...keyErrs);
        continue;
      }
      out.push(...validateQuantityField(v, `${allocPath}[${k}]`, 'nonnegative'));
    }
  }
  return out;
}

/** Kubernetes' PersistentVolumeClaim defaults (also applied to a StatefulSet's volumeClaimTemplates). */
export function applyClaimDefaults(pvc: KubeObject): void {
  const spec = ensureObject(pvc, 'spec');
  if (spec.volumeMode === undefined || spec.volumeMode === null) spec.volumeMode = 'Filesystem';
  const resources = obj(spec.resources);
  canonicalizeQuantities(resources?.requests);
  canonicalizeQuantities(resources?.limits);
  const status = obj(pvc.status);
  if (status && !status.phase) status.phase = 'Pending';
  canonicalizeQuantities(status?.capacity);
  canonicalizeQuantities(status?.allocatedResources);
  if (status)
    dropEmpty(status, ['accessModes', 'capacity', 'conditions', 'allocatedResources', 'allocatedResourceStatuses']);
}

/**
 * Removes the named fields when they are empty maps or lists: Go's `omitempty` never serializes
 * them, so a merge patch that nulls a map's last key (`{storage: null}`) leaves no `{}` behind.
 */
function dropEmpty(o: JsonObject, fields: readonly string[]): void {
  for (const f of fields) {
    const v = o[f];
    if (
      (Array.isArray(v) && v.length === 0) ||
      (v && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0)
    )
      delete o[f];
  }
}

const SNAPSHOT_GROUP = 'snapshot.storage.k8s.io';

function dataSourceAccepted(ds: JsonObject): boolean {
  const g = str(ds.apiGroup) ?? '';
  return (ds.kind === 'PersistentVolumeClaim' && g === '') || (ds.kind === 'VolumeSnapshot' && g === SNAPSHOT_GROUP);
}

/** Old clients' dataSource rules and the dataSource ⇄ dataSourceRef mirroring (AnyVolumeDataSource). */
function normalizeDataSources(spec: JsonObject, oldSpec?: JsonObject): void {
  const oldInUse =
    oldSpec !== undefined && (obj(oldSpec.dataSource) !== undefined || obj(oldSpec.dataSourceRef) !== undefined);
  const ds = obj(spec.dataSource);
  if (!oldInUse && ds && !dataSourceAccepted(ds)) delete spec.dataSource;
  const kept = obj(spec.dataSource);
  const ref = obj(spec.dataSourceRef);
  const pick = (o: JsonObject): JsonObject => {
    const r: JsonObject = {};
    if (o.apiGroup !== undefined) r.apiGroup = o.apiGroup;
    r.kind = o.kind;
    r.name = o.name;
    return r;
  };
  if (kept && !ref) spec.dataSourceRef = pick(kept);
  else if (ref && !kept && !str(ref.namespace)) spec.dataSource = pick(ref);
}

/** Fields of alpha features (off in 1.30) are dropped unless the stored object already uses them. */
function dropDisabledSpecFields(pvc: KubeObject, old?: KubeObject): void {
  const spec = obj(pvc.spec);
  const oldVac = obj(old?.spec)?.volumeAttributesClassName;
  if (spec && (oldVac === undefined || oldVac === null)) delete spec.volumeAttributesClassName;
}

export const persistentVolumeClaimResource: ResourceDef = baseResourceDef({
  group: '',
  version: 'v1',
  kind: 'PersistentVolumeClaim',
  plural: 'persistentvolumeclaims',
  namespaced: true,
  hasStatus: true,
  shortNames: ['pvc'],
  fieldSelectors: { name: (o) => o.metadata.name ?? '' },
  columns: [
    NAME_COLUMN,
    column('Status', 'string', 'phase represents the current phase of PersistentVolumeClaim.'),
    column('Volume', 'string', 'volumeName is the binding reference to the PersistentVolume backing this claim.'),
    column('Capacity', 'string', 'capacity represents the actual resources of the underlying volume.'),
    column(
      'Access Modes',
      'string',
      'accessModes contains the actual access modes the volume backing the PVC has. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#access-modes-1',
    ),
    column('StorageClass', 'string', 'StorageClass of the pvc'),
    column('VolumeAttributesClass', 'string', 'VolumeAttributesClass of the pvc'),
    AGE_COLUMN,
    column(
      'VolumeMode',
      'string',
      'volumeMode defines what type of volume is required by the claim. Value of Filesystem is implied when not included in claim spec.',
      1,
    ),
  ],
  row(pvc, now) {
    const spec = obj(pvc.spec) ?? {};
    const status = obj(pvc.status) ?? {};
    const volumeName = str(spec.volumeName) ?? '';
    // Capacity and modes are the volume's, so they show only once a volume is named.
    const capacity = volumeName ? quantityText(obj(status.capacity)?.storage) : '';
    const modes = volumeName ? accessModesString(status.accessModes) : '';
    return [
      pvc.metadata.name ?? '',
      pvc.metadata.deletionTimestamp ? 'Terminating' : (str(status.phase) ?? ''),
      volumeName,
      capacity,
      modes,
      claimClass(pvc),
      str(spec.volumeAttributesClassName) ?? '<unset>',
      ageString(pvc.metadata.creationTimestamp, now),
      str(spec.volumeMode) ?? '<unset>',
    ];
  },
  defaults: applyClaimDefaults,
  prepareForCreate(pvc) {
    pvc.status = { phase: 'Pending' };
    dropDisabledSpecFields(pvc);
    const spec = ensureObject(pvc, 'spec');
    normalizeDataSources(spec);
  },
  mutatingAdmission(pvc, old, ctx) {
    // DefaultStorageClass and StorageObjectInUseProtection act on create only.
    if (old) return;
    // Only a claim that did not ask for any class gets the default.
    if (!claimHasClass(pvc)) {
      const def = pickDefaultStorageClass(ctx.list('StorageClass'));
      if (def?.metadata.name) ensureObject(pvc, 'spec').storageClassName = def.metadata.name;
    }
    addFinalizer(pvc, PVC_PROTECTION_FINALIZER);
  },
  prepareForUpdate(pvc, old) {
    dropDisabledSpecFields(pvc, old);
    normalizeDataSources(ensureObject(pvc, 'spec'), obj(old.spec) ?? {});
  },
  prepareForStatusUpdate(pvc, old) {
    const status = ensureObject(pvc, 'status');
    const oldStatus = obj(old.status) ?? {};
    // VolumeAttributesClass is off in 1.30. RecoverVolumeExpansionFailure is on (beta and on by
    // default since 1.32): the CSI resizer records allocatedResources and their resize status.
    if (oldStatus.currentVolumeAttributesClassName === undefined) delete status.currentVolumeAttributesClassName;
    if (oldStatus.modifyVolumeStatus === undefined) delete status.modifyVolumeStatus;
  },
  validateCreate: (pvc) => validatePVC(pvc),
  // Validation first, then the resize admission (kube runs validating admission after the strategy).
  validateUpdate(pvc, old, ctx) {
    const causes = validatePVCUpdate(pvc, old);
    if (causes.length === 0) checkResize(pvc, old, ctx);
    return causes;
  },
  validateStatusUpdate: (pvc, old) => validatePVCStatusUpdate(pvc, old),
});
