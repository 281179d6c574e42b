import type { FieldCause } from '../../util/errors.js';
import type { KubeObject, ResourceDef } from './types.js';
import {
  AGE_COLUMN,
  FIELD_IMMUTABLE,
  NAME_COLUMN,
  ageString,
  baseResourceDef,
  bool,
  column,
  forbidden,
  invalid,
  nameIsDNSSubdomain,
  obj,
  required,
  str,
  tooLong,
  validateObjectMeta,
  validateObjectMetaUpdate,
} from './common.js';
import { validateCSIDriverName, validatePersistentVolumeSpec } from './persistentvolume.js';
import { jsonEqual } from '../../util/jsonequal.js';

const MAX_ATTACHMENT_METADATA_SIZE = 256 * 1024;
const MAX_VOLUME_ERROR_MESSAGE = 1024;

function validateVolumeError(e: unknown, field: string): FieldCause[] {
  const err = obj(e);
  if (!err) return [];
  const out: FieldCause[] = [];
  if ((str(err.message) ?? '').length > MAX_VOLUME_ERROR_MESSAGE) {
    // Kubernetes reports the metadata limit here, not the message limit.
    out.push(tooLong(`${field}.message`, MAX_ATTACHMENT_METADATA_SIZE));
  }
  return out;
}

/** `ValidateVolumeAttachment` plus the v1-only checks (`ValidateVolumeAttachmentV1`). */
function validateVA(va: KubeObject): FieldCause[] {
  const out = validateObjectMeta(va.metadata, { namespaced: false });
  const spec = obj(va.spec) ?? {};
  const attacher = str(spec.attacher) ?? '';
  if (!attacher) out.push(required('spec.attacher'));
  const source = obj(spec.source) ?? {};
  const pvName = source.persistentVolumeName;
  const inline = source.inlineVolumeSpec;
  const hasPv = pvName !== undefined && pvName !== null;
  const hasInline = inline !== undefined && inline !== null;
  const exactlyOne = 'must specify exactly one of inlineVolumeSpec and persistentVolumeName';
  if (!hasPv && !hasInline) out.push(required('spec.source', exactlyOne));
  else if (hasPv && hasInline) out.push(forbidden('spec.source', exactlyOne));
  else if (hasPv) {
    if (!str(pvName))
      out.push(required('spec.source.persistentVolumeName', 'must specify non empty persistentVolumeName'));
  } else out.push(...validatePersistentVolumeSpec(inline, 'spec.source.inlineVolumeSpec', true));
  const nodeName = str(spec.nodeName) ?? '';
  for (const m of nameIsDNSSubdomain(nodeName, false)) out.push(invalid('spec.nodeName', nodeName, m));

  const status = obj(va.status) ?? {};
  let size = 0;
  for (const [k, v] of Object.entries(obj(status.attachmentMetadata) ?? {}))
    size += Buffer.byteLength(k) + Buffer.byteLength(String(v));
  if (size > MAX_ATTACHMENT_METADATA_SIZE) out.push(tooLong('status.attachmentMetadata', MAX_ATTACHMENT_METADATA_SIZE));
  out.push(...validateVolumeError(status.attachError, 'status.attachError'));
  out.push(...validateVolumeError(status.detachError, 'status.detachError'));

  out.push(...validateCSIDriverName(attacher, 'spec.attacher'));
  if (hasPv) {
    const pv = String(pvName);
    for (const m of nameIsDNSSubdomain(pv, false)) out.push(invalid('spec.source.persistentVolumeName', pv, m));
  }
  return out;
}

function validateVAUpdate(va: KubeObject, old: KubeObject): FieldCause[] {
  const out = [...validateObjectMetaUpdate(va.metadata, old.metadata), ...validateVA(va)];
  // The spec is read-only once created.
  if (!jsonEqual(va.spec ?? {}, old.spec ?? {})) out.push(invalid('spec', va.spec ?? {}, FIELD_IMMUTABLE));
  return out;
}

export const volumeAttachmentResource: ResourceDef = baseResourceDef({
  group: 'storage.k8s.io',
  version: 'v1',
  kind: 'VolumeAttachment',
  plural: 'volumeattachments',
  namespaced: false,
  hasStatus: true,
  statusResetsMeta: true,
  columns: [
    NAME_COLUMN,
    column(
      'Attacher',
      'string',
      'attacher indicates the name of the volume driver that MUST handle this request. This is the name returned by GetPluginName().',
      0,
      'name',
    ),
    column('PV', 'string', 'persistentVolumeName represents the name of the persistent volume to attach.'),
    column('Node', 'string', 'nodeName represents the node that the volume should be attached to.'),
    column(
      'Attached',
      'boolean',
      'attached indicates the volume is successfully attached. This field must only be set by the entity completing the attach operation, i.e. the external-attacher.',
    ),
    AGE_COLUMN,
  ],
  row(va, now) {
    const spec = obj(va.spec) ?? {};
    return [
      va.metadata.name ?? '',
      str(spec.attacher) ?? '',
      str(obj(spec.source)?.persistentVolumeName) ?? '',
      str(spec.nodeName) ?? '',
      bool(obj(va.status)?.attached) ?? false,
      ageString(va.metadata.creationTimestamp, now),
    ];
  },
  prepareForCreate(va) {
    // v1 attachments start unattached; only the attacher reports status, through /status.
    va.status = { attached: false };
  },
  validateCreate: (va) => validateVA(va),
  validateUpdate: (va, old) => validateVAUpdate(va, old),
  validateStatusUpdate: (va, old) => validateVAUpdate(va, old),
});
