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
  duplicate,
  ensureObject,
  invalid,
  notSupported,
  obj,
  required,
  str,
  validateObjectMeta,
  validateObjectMetaUpdate,
} from './common.js';
import { jsonEqual } from '../../util/jsonequal.js';

const FS_GROUP_POLICIES = ['File', 'None', 'ReadWriteOnceWithFSType'];
export const VOLUME_LIFECYCLE_MODES = ['Persistent', 'Ephemeral'] as const;
const MIN_TOKEN_SECONDS = 10 * 60;
const MAX_TOKEN_SECONDS = 2 ** 32;

/** v1.30 `SetDefaults_CSIDriver` (SELinuxMountReadWriteOncePod is beta, on). */
function setDefaults(d: KubeObject): void {
  const spec = ensureObject(d, 'spec');
  const dflt = (k: string, v: unknown): void => {
    if (spec[k] === undefined || spec[k] === null) spec[k] = v;
  };
  dflt('attachRequired', true);
  dflt('podInfoOnMount', false);
  dflt('storageCapacity', false);
  dflt('fsGroupPolicy', 'ReadWriteOnceWithFSType');
  if (!(arr(spec.volumeLifecycleModes) ?? []).length) spec.volumeLifecycleModes = ['Persistent'];
  dflt('requiresRepublish', false);
  dflt('seLinuxMount', false);
}

function validateSpec(specIn: unknown): FieldCause[] {
  const spec = obj(specIn) ?? {};
  const out: FieldCause[] = [];
  const isNil = (k: string): boolean => spec[k] === undefined || spec[k] === null;
  // Kubernetes names this path "attachedRequired".
  if (isNil('attachRequired')) out.push(required('spec.attachedRequired'));
  if (isNil('podInfoOnMount')) out.push(required('spec.podInfoOnMount'));
  if (isNil('storageCapacity')) out.push(required('spec.storageCapacity'));
  if (!isNil('fsGroupPolicy') && !FS_GROUP_POLICIES.includes(String(spec.fsGroupPolicy))) {
    out.push(notSupported('spec.fsGroupPolicy', String(spec.fsGroupPolicy), FS_GROUP_POLICIES));
  }
  const audiences = new Set<string>();
  (arr(spec.tokenRequests) ?? []).forEach((t, i) => {
    const p = `spec.tokenRequests[${i}]`;
    const req = obj(t) ?? {};
    const audience = str(req.audience) ?? '';
    if (audiences.has(audience)) {
      out.push(duplicate(`${p}.audience`, audience));
      return;
    }
    audiences.add(audience);
    const secs = req.expirationSeconds;
    if (typeof secs !== 'number') return;
    if (secs < MIN_TOKEN_SECONDS)
      out.push(invalid(`${p}.expirationSeconds`, secs, 'may not specify a duration less than 10 minutes'));
    if (secs > MAX_TOKEN_SECONDS)
      out.push(invalid(`${p}.expirationSeconds`, secs, 'may not specify a duration larger than 2^32 seconds'));
  });
  for (const m of arr(spec.volumeLifecycleModes) ?? []) {
    if (!(VOLUME_LIFECYCLE_MODES as readonly unknown[]).includes(m))
      out.push(notSupported('spec.volumeLifecycleModes', String(m), VOLUME_LIFECYCLE_MODES));
  }
  if (isNil('seLinuxMount')) out.push(required('spec.seLinuxMount'));
  return out;
}

function validateUpdate(d: KubeObject, old: KubeObject): FieldCause[] {
  const out = [...validateObjectMetaUpdate(d.metadata, old.metadata), ...validateSpec(d.spec)];
  const spec = obj(d.spec) ?? {};
  const oldSpec = obj(old.spec) ?? {};
  // podInfoOnMount, fsGroupPolicy, tokenRequests, requiresRepublish, seLinuxMount may change (1.28+).
  if (!jsonEqual(spec.attachRequired ?? null, oldSpec.attachRequired ?? null)) {
    out.push(invalid('spec.attachedRequired', (spec.attachRequired as boolean | undefined) ?? null, FIELD_IMMUTABLE));
  }
  if (!jsonEqual(spec.volumeLifecycleModes ?? null, oldSpec.volumeLifecycleModes ?? null)) {
    const modes = (arr(spec.volumeLifecycleModes) ?? []).map((m) => JSON.stringify(m)).join(', ');
    out.push(
      invalid('spec.volumeLifecycleModes', { rendered: `[]storage.VolumeLifecycleMode{${modes}}` }, FIELD_IMMUTABLE),
    );
  }
  return out;
}

export const csiDriverResource: ResourceDef = baseResourceDef({
  group: 'storage.k8s.io',
  version: 'v1',
  kind: 'CSIDriver',
  plural: 'csidrivers',
  namespaced: false,
  hasStatus: false,
  columns: [
    NAME_COLUMN,
    column(
      'AttachRequired',
      'boolean',
      'attachRequired indicates this CSI volume driver requires an attach operation (because it implements the CSI ControllerPublishVolume() method), and that the Kubernetes attach detach controller should call the attach volume interface which checks the volumeattachment status and waits until the volume is attached before proceeding to mounting.',
    ),
    column(
      'PodInfoOnMount',
      'boolean',
      'podInfoOnMount indicates this CSI volume driver requires additional pod information (like podName, podUID, etc.) during mount operations, if set to true.',
    ),
    column(
      'StorageCapacity',
      'boolean',
      'storageCapacity indicates that the CSI volume driver wants pod scheduling to consider the storage capacity that the driver deployment will report by creating CSIStorageCapacity objects with capacity information, if set to true.',
    ),
    column(
      'TokenRequests',
      'string',
      "tokenRequests indicates the CSI driver needs pods' service account tokens it is mounting volume for to do necessary authentication.",
    ),
    column(
      'RequiresRepublish',
      'boolean',
      'requiresRepublish indicates the CSI driver wants `NodePublishVolume` being periodically called to reflect any possible change in the mounted volume.',
    ),
    column('Modes', 'string', 'volumeLifecycleModes defines what kind of volumes this CSI volume driver supports.'),
    AGE_COLUMN,
  ],
  row(d, now) {
    const spec = obj(d.spec) ?? {};
    const modes = (arr(spec.volumeLifecycleModes) ?? []).map(String).join(',');
    const tokens = arr(spec.tokenRequests);
    return [
      d.metadata.name ?? '',
      bool(spec.attachRequired) ?? true,
      bool(spec.podInfoOnMount) ?? false,
      bool(spec.storageCapacity) ?? false,
      tokens ? tokens.map((t) => str(obj(t)?.audience) ?? '').join(',') : '<unset>',
      bool(spec.requiresRepublish) ?? false,
      modes || '<none>',
      ageString(d.metadata.creationTimestamp, now),
    ];
  },
  defaults: setDefaults,
  prepareForUpdate(d, old) {
    // Any spec change bumps the generation (starting from the unset 0).
    if (!jsonEqual(d.spec, old.spec)) d.metadata.generation = (old.metadata.generation ?? 0) + 1;
  },
  validateCreate: (d) => [...validateObjectMeta(d.metadata, { namespaced: false }), ...validateSpec(d.spec)],
  validateUpdate: (d, old) => validateUpdate(d, old),
});
