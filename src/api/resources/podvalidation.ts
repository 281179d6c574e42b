import type { FieldCause } from '../../util/errors.js';
import { listAt, objectAt, strAt } from './corehelpers.js';
import { duplicate, forbidden, invalid, notFound, notSupported, required } from './fielderrors.js';

import { isDNS1123Label, isDNS1123Subdomain } from './names.js';

import { POD_PHASES } from '../../kube/phases.js';

import { compareQuantities, tryParseQuantity } from '../../kube/quantity.js';

import type { KubeObject } from './types.js';
import { jsonEqual } from '../../util/jsonequal.js';

/** Pod spec validation (ValidatePodSpec / ValidatePodUpdate / ValidatePodStatusUpdate), at Stowage's depth. */

type Obj = Record<string, unknown>;

export const RESTART_POLICIES = ['Always', 'OnFailure', 'Never'] as const;
// kube lists set-backed supported values sorted.
export const DNS_POLICIES = ['ClusterFirst', 'ClusterFirstWithHostNet', 'Default', 'None'] as const;
export const PULL_POLICIES = ['Always', 'IfNotPresent', 'Never'] as const;
export const TERMINATION_MESSAGE_POLICIES = ['File', 'FallbackToLogsOnError'] as const;
export const PROTOCOLS = ['SCTP', 'TCP', 'UDP'] as const;

/** Volume source fields of a v1 Volume, in the order kube's validation visits them (the first one counts). */
export const VOLUME_SOURCES = [
  'emptyDir',
  'hostPath',
  'gitRepo',
  'gcePersistentDisk',
  'awsElasticBlockStore',
  'secret',
  'nfs',
  'iscsi',
  'glusterfs',
  'persistentVolumeClaim',
  'rbd',
  'flexVolume',
  'cinder',
  'cephfs',
  'flocker',
  'downwardAPI',
  'fc',
  'azureFile',
  'configMap',
  'vsphereVolume',
  'quobyte',
  'azureDisk',
  'photonPersistentDisk',
  'projected',
  'portworxVolume',
  'scaleIO',
  'storageos',
  'csi',
  'ephemeral',
] as const;

const ENV_NAME = '[-._a-zA-Z][-._a-zA-Z0-9]*';
const ENV_NAME_RE = new RegExp(`^${ENV_NAME}$`);
const ENV_NAME_MSG =
  "a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit " +
  `(e.g. 'my.env-name',  or 'MY_ENV.NAME',  or 'MyEnvName1', regex used for validation is '${ENV_NAME}')`;
const PORT_RANGE_MSG = 'must be between 1 and 65535, inclusive';

function oneOf<T extends string>(field: string, v: unknown, allowed: readonly T[], out: FieldCause[]): void {
  if (v === undefined || v === '') out.push(required(field));
  else if (typeof v !== 'string' || !(allowed as readonly string[]).includes(v))
    out.push(notSupported(field, v as string, allowed));
}

function validateVolumes(volumes: Obj[], out: FieldCause[]): Map<string, Obj> {
  const byName = new Map<string, Obj>();
  volumes.forEach((v, i) => {
    const p = `spec.volumes[${i}]`;
    const name = strAt(v, 'name');
    if (!name) out.push(required(`${p}.name`));
    else {
      for (const m of isDNS1123Label(name)) out.push(invalid(`${p}.name`, name, m));
      if (byName.has(name)) out.push(duplicate(`${p}.name`, name));
      else byName.set(name, v);
    }
    const sources = VOLUME_SOURCES.filter((s) => v[s] !== undefined && v[s] !== null);
    if (sources.length === 0) out.push(required(p, 'must specify a volume type'));
    for (const extra of sources.slice(1))
      out.push(forbidden(`${p}.${extra}`, 'may not specify more than 1 volume type'));
    const pvc = objectAt(v, 'persistentVolumeClaim');
    if (pvc && !strAt(pvc, 'claimName')) out.push(required(`${p}.persistentVolumeClaim.claimName`));
    const hostPath = objectAt(v, 'hostPath');
    if (hostPath && !strAt(hostPath, 'path')) out.push(required(`${p}.hostPath.path`));
    const csi = objectAt(v, 'csi');
    if (csi && !strAt(csi, 'driver')) out.push(required(`${p}.csi.driver`));
  });
  return byName;
}

function validatePorts(c: Obj, p: string, out: FieldCause[]): void {
  listAt(c, 'ports').forEach((port, j) => {
    const pp = `${p}.ports[${j}]`;
    const n = port.containerPort;
    if (n === undefined || n === 0) out.push(required(`${pp}.containerPort`));
    else if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > 65535)
      out.push(invalid(`${pp}.containerPort`, n as number, PORT_RANGE_MSG));
    const h = port.hostPort;
    if (h !== undefined && h !== 0 && (typeof h !== 'number' || !Number.isInteger(h) || h < 1 || h > 65535)) {
      out.push(invalid(`${pp}.hostPort`, h as number, PORT_RANGE_MSG));
    }
    oneOf(`${pp}.protocol`, port.protocol, PROTOCOLS, out);
  });
}

/** Requests may not exceed limits (ValidateResourceRequirements); values must be quantities. */
function validateResources(c: Obj, p: string, out: FieldCause[]): void {
  const resources = objectAt(c, 'resources');
  const limits = objectAt(resources, 'limits') ?? {};
  const requests = objectAt(resources, 'requests') ?? {};
  for (const [kind, map] of [
    ['limits', limits],
    ['requests', requests],
  ] as const) {
    for (const [name, v] of Object.entries(map)) {
      const q = tryParseQuantity(v);
      if (!q) out.push(invalid(`${p}.resources.${kind}[${name}]`, String(v), 'must be a valid quantity'));
      else if (q.nanos < 0n)
        out.push(invalid(`${p}.resources.${kind}[${name}]`, String(v), 'must be greater than or equal to 0'));
    }
  }
  for (const [name, v] of Object.entries(requests)) {
    const req = tryParseQuantity(v);
    const lim = tryParseQuantity(limits[name]);
    if (req && lim && compareQuantities(req, lim) > 0) {
      out.push(
        invalid(
          `${p}.resources.requests`,
          String(v),
          `must be less than or equal to ${name} limit of ${String(limits[name])}`,
        ),
      );
    }
  }
}

const MOUNT_PROPAGATIONS = ['Bidirectional', 'HostToContainer', 'None'] as const;

/**
 * validateMountPropagation: one of the three modes; Bidirectional (mounts made in the container
 * reach the host) only for a privileged container.
 */
function validateMountPropagation(m: Obj, c: Obj, field: string, out: FieldCause[]): void {
  const mode = m.mountPropagation;
  if (mode === undefined || mode === null) return;
  if (!(MOUNT_PROPAGATIONS as readonly unknown[]).includes(mode))
    out.push(notSupported(field, String(mode), MOUNT_PROPAGATIONS));
  if (mode === 'Bidirectional' && objectAt(c, 'securityContext')?.privileged !== true)
    out.push(forbidden(field, 'Bidirectional mount propagation is available only to privileged containers'));
}

function validateContainer(c: Obj, p: string, volumes: Map<string, Obj>, out: FieldCause[]): void {
  const name = strAt(c, 'name');
  if (!name) out.push(required(`${p}.name`));
  else for (const m of isDNS1123Label(name)) out.push(invalid(`${p}.name`, name, m));
  if (!strAt(c, 'image')) out.push(required(`${p}.image`));
  oneOf(`${p}.imagePullPolicy`, c.imagePullPolicy, PULL_POLICIES, out);
  oneOf(`${p}.terminationMessagePolicy`, c.terminationMessagePolicy, TERMINATION_MESSAGE_POLICIES, out);
  validatePorts(c, p, out);
  validateResources(c, p, out);
  listAt(c, 'env').forEach((e, j) => {
    const envName = strAt(e, 'name');
    if (!envName) out.push(required(`${p}.env[${j}].name`));
    else if (!ENV_NAME_RE.test(envName)) out.push(invalid(`${p}.env[${j}].name`, envName, ENV_NAME_MSG));
  });
  const mountPaths = new Set<string>();
  listAt(c, 'volumeMounts').forEach((m, j) => {
    const mp = `${p}.volumeMounts[${j}]`;
    const vol = strAt(m, 'name');
    if (!vol) out.push(required(`${mp}.name`));
    else if (!volumes.has(vol)) out.push(notFound(`${mp}.name`, vol));
    const path = strAt(m, 'mountPath');
    if (!path) out.push(required(`${mp}.mountPath`));
    else if (mountPaths.has(path)) out.push(invalid(`${mp}.mountPath`, path, 'must be unique'));
    else mountPaths.add(path);
    validateMountPropagation(m, c, `${mp}.mountPropagation`, out);
  });
  const devicePaths = new Set<string>();
  listAt(c, 'volumeDevices').forEach((d, j) => {
    const dp = `${p}.volumeDevices[${j}]`;
    const vol = strAt(d, 'name');
    if (!vol) out.push(required(`${dp}.name`));
    else if (!volumes.has(vol)) out.push(notFound(`${dp}.name`, vol));
    else if (!objectAt(volumes.get(vol), 'persistentVolumeClaim') && !objectAt(volumes.get(vol), 'ephemeral')) {
      out.push(
        invalid(
          `${dp}.name`,
          vol,
          'can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode',
        ),
      );
    }
    const path = strAt(d, 'devicePath');
    if (!path) out.push(required(`${dp}.devicePath`));
    else if (devicePaths.has(path)) out.push(invalid(`${dp}.devicePath`, path, 'must be unique'));
    else if (mountPaths.has(path)) out.push(invalid(`${dp}.devicePath`, path, 'conflicts with volumeMount path'));
    else devicePaths.add(path);
  });
}

/** ValidatePodSpec at Stowage's depth (call after defaults). */
export function validatePodSpec(pod: KubeObject): FieldCause[] {
  const out: FieldCause[] = [];
  const spec = objectAt(pod, 'spec');
  if (!spec) return [required('spec')];
  const volumes = validateVolumes(listAt(spec, 'volumes'), out);
  const names = new Set<string>();
  const containers = listAt(spec, 'containers');
  if (containers.length === 0) out.push(required('spec.containers'));
  for (const [key, list] of [
    ['initContainers', listAt(spec, 'initContainers')],
    ['containers', containers],
  ] as const) {
    list.forEach((c, i) => {
      const p = `spec.${key}[${i}]`;
      validateContainer(c, p, volumes, out);
      const name = strAt(c, 'name');
      if (name && names.has(name)) out.push(duplicate(`${p}.name`, name));
      names.add(name);
    });
  }
  oneOf('spec.restartPolicy', spec.restartPolicy, RESTART_POLICIES, out);
  oneOf('spec.dnsPolicy', spec.dnsPolicy, DNS_POLICIES, out);
  const ads = spec.activeDeadlineSeconds;
  if (
    ads !== undefined &&
    ads !== null &&
    (typeof ads !== 'number' || !Number.isInteger(ads) || ads < 1 || ads > 2147483647)
  ) {
    out.push(invalid('spec.activeDeadlineSeconds', ads as number, 'must be between 1 and 2147483647, inclusive'));
  }
  const nodeName = strAt(spec, 'nodeName');
  if (nodeName) for (const m of isDNS1123Subdomain(nodeName)) out.push(invalid('spec.nodeName', nodeName, m));
  return out;
}

const UPDATE_FORBIDDEN =
  'pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,' +
  '`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),' +
  '`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)';

/**
 * ValidatePodUpdate's spec rule: a pod's spec is immutable except container images,
 * activeDeadlineSeconds (set, or lowered), tolerations (additions only), removal of scheduling
 * gates and — standing in for the binding subresource Stowage does not serve — nodeName set once.
 */
export function validatePodSpecUpdate(pod: KubeObject, old: KubeObject): FieldCause[] {
  const out: FieldCause[] = [];
  const spec = structuredClone(objectAt(pod, 'spec') ?? {});
  const oldSpec = objectAt(old, 'spec') ?? {};
  // Copy the mutable fields over from the new spec onto the old, then compare.
  const mutated: Obj = structuredClone(oldSpec);
  for (const key of ['containers', 'initContainers'] as const) {
    const oldList = listAt(mutated, key);
    const newList = listAt(spec, key);
    if (oldList.length === newList.length) oldList.forEach((c, i) => (c.image = newList[i]?.image));
  }
  const oldAds = oldSpec.activeDeadlineSeconds;
  const newAds = spec.activeDeadlineSeconds;
  if (oldAds !== undefined && oldAds !== null) {
    if (newAds === undefined || newAds === null)
      out.push(invalid('spec.activeDeadlineSeconds', null, 'must not update from a positive integer to nil value'));
    else if (typeof newAds === 'number' && typeof oldAds === 'number' && newAds > oldAds) {
      out.push(invalid('spec.activeDeadlineSeconds', newAds, 'must be less than or equal to previous value'));
    }
  }
  mutated.activeDeadlineSeconds = newAds;
  const oldTolerations = listAt(oldSpec, 'tolerations');
  const newTolerations = listAt(spec, 'tolerations');
  const kept = oldTolerations.every((t) => newTolerations.some((n) => jsonEqual(n, t)));
  if (kept) mutated.tolerations = spec.tolerations;
  const oldGates = listAt(oldSpec, 'schedulingGates');
  const newGates = listAt(spec, 'schedulingGates');
  if (newGates.every((g) => oldGates.some((o) => jsonEqual(o, g)))) mutated.schedulingGates = spec.schedulingGates;
  if (!strAt(oldSpec, 'nodeName') && strAt(spec, 'nodeName')) mutated.nodeName = spec.nodeName;
  if (!jsonEqual(mutated, spec)) {
    if (!kept)
      out.push(forbidden('spec.tolerations', 'existing toleration can not be modified except its tolerationSeconds'));
    out.push(forbidden('spec', UPDATE_FORBIDDEN));
  }
  return out;
}

const TERMINAL = new Set(['Succeeded', 'Failed']);

/** ValidatePodStatusUpdate at Stowage's depth: known phase, and a terminal phase stays terminal. */
export function validatePodStatus(pod: KubeObject, old: KubeObject): FieldCause[] {
  const out: FieldCause[] = [];
  const phase = strAt(objectAt(pod, 'status'), 'phase');
  const oldPhase = strAt(objectAt(old, 'status'), 'phase');
  if (phase && !(POD_PHASES as readonly string[]).includes(phase))
    out.push(notSupported('status.phase', phase, POD_PHASES));
  if (TERMINAL.has(oldPhase) && phase !== oldPhase) {
    out.push(
      forbidden(
        'status.phase',
        `cannot transition from terminal phase ${JSON.stringify(oldPhase)} to ${JSON.stringify(phase)}`,
      ),
    );
  }
  return out;
}
