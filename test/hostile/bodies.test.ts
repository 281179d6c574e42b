/**
 * Wrong-typed bodies for every kind the API serves and every field type (map, list, string, bool,
 * int, Quantity, time, bytes, nested object), sent as create, update, status update and each patch
 * type. kube-apiserver's answers (FACTS.md, measured on v1.25): a create/update body its Go decoder
 * refuses is a 400 BadRequest `<Kind> in version "v1" cannot be handled as a <Kind>: <Go error>`;
 * a patch whose result does not decode is a 422 Invalid with one cause on the field `patch`.
 * After every case the server is ready and the kind's collection is exactly as before.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectReady, send, snapshot, startHostileServer, type HostileServer } from './kit.js';

interface Kind {
  readonly kind: string;
  /** Collection path the objects are created in. */
  readonly collection: string;
  readonly apiVersion: string;
  readonly hasStatus: boolean;
  /** A valid object of this kind named `name`. */
  valid(name: string): Record<string, unknown>;
}

const ns = (plural: string): string => `/api/v1/namespaces/default/${plural}`;
const KINDS: Record<string, Kind> = {
  Namespace: {
    kind: 'Namespace',
    collection: '/api/v1/namespaces',
    apiVersion: 'v1',
    hasStatus: true,
    valid: (name) => ({ metadata: { name } }),
  },
  Node: {
    kind: 'Node',
    collection: '/api/v1/nodes',
    apiVersion: 'v1',
    hasStatus: true,
    valid: (name) => ({ metadata: { name } }),
  },
  Pod: {
    kind: 'Pod',
    collection: ns('pods'),
    apiVersion: 'v1',
    hasStatus: true,
    valid: (name) => ({
      metadata: { name },
      spec: { containers: [{ name: 'c', image: 'busybox', ports: [{ containerPort: 80 }] }] },
    }),
  },
  PersistentVolume: {
    kind: 'PersistentVolume',
    collection: '/api/v1/persistentvolumes',
    apiVersion: 'v1',
    hasStatus: true,
    valid: (name) => ({
      metadata: { name },
      spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: `/tmp/${name}` } },
    }),
  },
  PersistentVolumeClaim: {
    kind: 'PersistentVolumeClaim',
    collection: ns('persistentvolumeclaims'),
    apiVersion: 'v1',
    hasStatus: true,
    valid: (name) => ({
      metadata: { name },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: '' },
    }),
  },
  Event: {
    kind: 'Event',
    collection: ns('events'),
    apiVersion: 'v1',
    hasStatus: false,
    valid: (name) => ({
      metadata: { name },
      involvedObject: { kind: 'Pod', name: 'p', namespace: 'default' },
      reason: 'Tested',
      message: 'm',
      type: 'Normal',
      count: 1,
    }),
  },
  Secret: {
    kind: 'Secret',
    collection: ns('secrets'),
    apiVersion: 'v1',
    hasStatus: false,
    valid: (name) => ({ metadata: { name }, data: { a: 'YQ==' } }),
  },
  ConfigMap: {
    kind: 'ConfigMap',
    collection: ns('configmaps'),
    apiVersion: 'v1',
    hasStatus: false,
    valid: (name) => ({ metadata: { name }, data: { a: 'b' } }),
  },
  StorageClass: {
    kind: 'StorageClass',
    collection: '/apis/storage.k8s.io/v1/storageclasses',
    apiVersion: 'storage.k8s.io/v1',
    hasStatus: false,
    valid: (name) => ({ metadata: { name }, provisioner: 'hostile.example.com' }),
  },
  CSIDriver: {
    kind: 'CSIDriver',
    collection: '/apis/storage.k8s.io/v1/csidrivers',
    apiVersion: 'storage.k8s.io/v1',
    hasStatus: false,
    valid: (name) => ({ metadata: { name: `${name}.example.com` }, spec: { attachRequired: false } }),
  },
  CSINode: {
    kind: 'CSINode',
    collection: '/apis/storage.k8s.io/v1/csinodes',
    apiVersion: 'storage.k8s.io/v1',
    hasStatus: false,
    valid: (name) => ({
      metadata: { name },
      spec: { drivers: [{ name: 'd.example.com', nodeID: 'n', allocatable: { count: 3 } }] },
    }),
  },
  VolumeAttachment: {
    kind: 'VolumeAttachment',
    collection: '/apis/storage.k8s.io/v1/volumeattachments',
    apiVersion: 'storage.k8s.io/v1',
    hasStatus: true,
    valid: (name) => ({
      metadata: { name },
      spec: { attacher: 'd.example.com', nodeName: 'n1', source: { persistentVolumeName: 'pv1' } },
    }),
  },
  CSIStorageCapacity: {
    kind: 'CSIStorageCapacity',
    collection: '/apis/storage.k8s.io/v1/namespaces/default/csistoragecapacities',
    apiVersion: 'storage.k8s.io/v1',
    hasStatus: false,
    valid: (name) => ({ metadata: { name }, storageClassName: 'sc', capacity: '1Gi' }),
  },
  Lease: {
    kind: 'Lease',
    collection: '/apis/coordination.k8s.io/v1/namespaces/default/leases',
    apiVersion: 'coordination.k8s.io/v1',
    hasStatus: false,
    valid: (name) => ({ metadata: { name }, spec: { holderIdentity: 'h', leaseDurationSeconds: 10 } }),
  },
};

const QUANTITY_ERROR = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
const MICRO_NOW = 'parsing time "now" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "now" as "2006"';
const into = (value: string, field: string, goType: string): string =>
  `json: cannot unmarshal ${value} into Go struct field ${field} of type ${goType}`;

interface BadField {
  readonly kind: keyof typeof KINDS;
  /** Dotted path; numbers index lists. */
  readonly path: string;
  readonly value: unknown;
  /** Go's error, as kube-apiserver words it after `cannot be handled as a <Kind>: `. */
  readonly want: string;
  /** The field lives in status: also sent to /status. */
  readonly status?: boolean;
}

/** Fields of ObjectMeta, the same for every kind. */
const META_CASES = (kind: keyof typeof KINDS): BadField[] => [
  {
    kind,
    path: 'metadata.labels',
    value: ['a'],
    want: into('array', 'ObjectMeta.metadata.labels', 'map[string]string'),
  },
  {
    kind,
    path: 'metadata.annotations',
    value: { a: 1 },
    want: into('number', 'ObjectMeta.metadata.annotations', 'string'),
  },
  { kind, path: 'metadata.finalizers', value: 'x', want: into('string', 'ObjectMeta.metadata.finalizers', '[]string') },
  { kind, path: 'metadata.generation', value: 'x', want: into('string', 'ObjectMeta.metadata.generation', 'int64') },
  {
    kind,
    path: 'metadata.ownerReferences',
    value: [{ apiVersion: 'v1', kind: 'X', name: 'x', uid: 'u', controller: 'yes' }],
    want: into('string', 'OwnerReference.metadata.ownerReferences.controller', 'bool'),
  },
  { kind, path: 'metadata', value: [], want: into('array', `${KINDS[kind]!.kind}.metadata`, 'v1.ObjectMeta') },
];

const CASES: BadField[] = [
  ...Object.keys(KINDS).flatMap((k) => META_CASES(k)),
  { kind: 'PersistentVolume', path: 'spec.capacity.storage', value: true, want: QUANTITY_ERROR },
  {
    kind: 'PersistentVolume',
    path: 'spec.capacity',
    value: [],
    want: into('array', 'PersistentVolumeSpec.spec.capacity', 'v1.ResourceList'),
  },
  {
    kind: 'PersistentVolume',
    path: 'spec.accessModes',
    value: 'ReadWriteOnce',
    want: into('string', 'PersistentVolumeSpec.spec.accessModes', '[]v1.PersistentVolumeAccessMode'),
  },
  {
    kind: 'PersistentVolume',
    path: 'spec.claimRef',
    value: 'x',
    want: into('string', 'PersistentVolumeSpec.spec.claimRef', 'v1.ObjectReference'),
  },
  {
    kind: 'PersistentVolume',
    path: 'spec.mountOptions',
    value: [1, 2],
    want: into('number', 'PersistentVolumeSpec.spec.mountOptions', 'string'),
  },
  {
    kind: 'PersistentVolume',
    path: 'spec.persistentVolumeReclaimPolicy',
    value: 5,
    want: into('number', 'PersistentVolumeSpec.spec.persistentVolumeReclaimPolicy', 'v1.PersistentVolumeReclaimPolicy'),
  },
  {
    kind: 'PersistentVolume',
    path: 'spec.hostPath.path',
    value: { p: 1 },
    want: into('object', 'HostPathVolumeSource.spec.hostPath.path', 'string'),
  },
  {
    kind: 'PersistentVolume',
    path: 'status.phase',
    value: 5,
    want: into('number', 'PersistentVolumeStatus.status.phase', 'v1.PersistentVolumePhase'),
    status: true,
  },
  {
    kind: 'PersistentVolumeClaim',
    path: 'spec.selector',
    value: { matchLabels: ['a'] },
    want: into('array', 'LabelSelector.spec.selector.matchLabels', 'map[string]string'),
  },
  { kind: 'PersistentVolumeClaim', path: 'spec.resources.requests.storage', value: 'lots', want: QUANTITY_ERROR },
  {
    kind: 'PersistentVolumeClaim',
    path: 'spec.volumeMode',
    value: 1,
    want: into('number', 'PersistentVolumeClaimSpec.spec.volumeMode', 'v1.PersistentVolumeMode'),
  },
  {
    kind: 'PersistentVolumeClaim',
    path: 'status.capacity',
    value: { storage: [] },
    want: QUANTITY_ERROR,
    status: true,
  },
  {
    kind: 'Pod',
    path: 'spec.containers.0.volumeMounts',
    value: { a: 1 },
    want: into('object', 'Container.spec.containers.volumeMounts', '[]v1.VolumeMount'),
  },
  {
    kind: 'Pod',
    path: 'spec.containers.0.ports.0.containerPort',
    value: 1.5,
    want: into('number 1.5', 'ContainerPort.spec.containers.ports.containerPort', 'int32'),
  },
  {
    kind: 'Pod',
    path: 'spec.containers.0.ports.0.containerPort',
    value: 4294967296,
    want: into('number 4294967296', 'ContainerPort.spec.containers.ports.containerPort', 'int32'),
  },
  {
    kind: 'Pod',
    path: 'spec.containers.0.livenessProbe',
    value: { httpGet: { port: true } },
    want: into('bool', 'HTTPGetAction.spec.containers.livenessProbe.httpGet.port', 'int32'),
  },
  { kind: 'Pod', path: 'spec.containers.0.resources', value: { limits: { cpu: 'lots' } }, want: QUANTITY_ERROR },
  {
    kind: 'Pod',
    path: 'spec.terminationGracePeriodSeconds',
    value: '30',
    want: into('string', 'PodSpec.spec.terminationGracePeriodSeconds', 'int64'),
  },
  { kind: 'Pod', path: 'spec.hostNetwork', value: 'yes', want: into('string', 'PodSpec.spec.hostNetwork', 'bool') },
  {
    kind: 'Pod',
    path: 'spec.volumes',
    value: [{ name: 'v', persistentVolumeClaim: 'x' }],
    want: into('string', 'Volume.spec.volumes.persistentVolumeClaim', 'v1.PersistentVolumeClaimVolumeSource'),
  },
  {
    kind: 'Pod',
    path: 'status.phase',
    value: ['Running'],
    want: into('array', 'PodStatus.status.phase', 'v1.PodPhase'),
    status: true,
  },
  {
    kind: 'Node',
    path: 'spec.unschedulable',
    value: 'yes',
    want: into('string', 'NodeSpec.spec.unschedulable', 'bool'),
  },
  { kind: 'Node', path: 'status.capacity', value: { cpu: {} }, want: QUANTITY_ERROR, status: true },
  {
    kind: 'Namespace',
    path: 'spec.finalizers',
    value: 'kubernetes',
    want: into('string', 'NamespaceSpec.spec.finalizers', '[]v1.FinalizerName'),
  },
  { kind: 'Event', path: 'count', value: 'x', want: into('string', 'Event.count', 'int32') },
  {
    kind: 'Event',
    path: 'involvedObject',
    value: 'x',
    want: into('string', 'Event.involvedObject', 'v1.ObjectReference'),
  },
  { kind: 'Event', path: 'eventTime', value: 'now', want: MICRO_NOW },
  { kind: 'Secret', path: 'data.a', value: 'not base64!', want: 'illegal base64 data at input byte 3' },
  { kind: 'Secret', path: 'type', value: 1, want: into('number', 'Secret.type', 'v1.SecretType') },
  { kind: 'Secret', path: 'stringData', value: { a: 1 }, want: into('number', 'Secret.stringData', 'string') },
  { kind: 'ConfigMap', path: 'data', value: [], want: into('array', 'ConfigMap.data', 'map[string]string') },
  { kind: 'ConfigMap', path: 'immutable', value: 'no', want: into('string', 'ConfigMap.immutable', 'bool') },
  { kind: 'ConfigMap', path: 'binaryData', value: { a: 5 }, want: into('number', 'ConfigMap.binaryData', '[]uint8') },
  {
    kind: 'StorageClass',
    path: 'allowVolumeExpansion',
    value: 'yes',
    want: into('string', 'StorageClass.allowVolumeExpansion', 'bool'),
  },
  {
    kind: 'StorageClass',
    path: 'parameters',
    value: { a: { b: 1 } },
    want: into('object', 'StorageClass.parameters', 'string'),
  },
  {
    kind: 'StorageClass',
    path: 'reclaimPolicy',
    value: [],
    want: into('array', 'StorageClass.reclaimPolicy', 'v1.PersistentVolumeReclaimPolicy'),
  },
  {
    kind: 'StorageClass',
    path: 'allowedTopologies',
    value: 'x',
    want: into('string', 'StorageClass.allowedTopologies', '[]v1.TopologySelectorTerm'),
  },
  {
    kind: 'CSIDriver',
    path: 'spec.attachRequired',
    value: 'yes',
    want: into('string', 'CSIDriverSpec.spec.attachRequired', 'bool'),
  },
  {
    kind: 'CSIDriver',
    path: 'spec.volumeLifecycleModes',
    value: 'Persistent',
    want: into('string', 'CSIDriverSpec.spec.volumeLifecycleModes', '[]v1.VolumeLifecycleMode'),
  },
  {
    kind: 'CSINode',
    path: 'spec.drivers',
    value: {},
    want: into('object', 'CSINodeSpec.spec.drivers', '[]v1.CSINodeDriver'),
  },
  {
    kind: 'CSINode',
    path: 'spec.drivers.0.allocatable.count',
    value: 'x',
    want: into('string', 'VolumeNodeResources.spec.drivers.allocatable.count', 'int32'),
  },
  {
    kind: 'VolumeAttachment',
    path: 'spec.source.persistentVolumeName',
    value: 5,
    want: into('number', 'VolumeAttachmentSource.spec.source.persistentVolumeName', 'string'),
  },
  {
    kind: 'VolumeAttachment',
    path: 'spec.attacher',
    value: [],
    want: into('array', 'VolumeAttachmentSpec.spec.attacher', 'string'),
  },
  {
    kind: 'VolumeAttachment',
    path: 'status.attached',
    value: 'true',
    want: into('string', 'VolumeAttachmentStatus.status.attached', 'bool'),
    status: true,
  },
  { kind: 'CSIStorageCapacity', path: 'capacity', value: 'lots', want: QUANTITY_ERROR },
  {
    kind: 'CSIStorageCapacity',
    path: 'nodeTopology',
    value: 'x',
    want: into('string', 'CSIStorageCapacity.nodeTopology', 'v1.LabelSelector'),
  },
  {
    kind: 'Lease',
    path: 'spec.leaseDurationSeconds',
    value: 1.5,
    want: into('number 1.5', 'LeaseSpec.spec.leaseDurationSeconds', 'int32'),
  },
  { kind: 'Lease', path: 'spec.renewTime', value: 'now', want: MICRO_NOW },
];

type Obj = Record<string, unknown>;

/** A deep copy of `obj` with the value at `path` replaced (missing objects on the way are made). */
function withField(obj: Obj, path: string, value: unknown): Obj {
  const out = structuredClone(obj);
  const segs = path.split('.');
  let cur: Record<string, unknown> | unknown[] = out;
  for (const seg of segs.slice(0, -1)) {
    const key = /^\d+$/.test(seg) ? Number(seg) : seg;
    const next = (cur as Record<string | number, unknown>)[key];
    if (next === undefined || next === null || typeof next !== 'object')
      (cur as Record<string | number, unknown>)[key] = {};
    cur = (cur as Record<string | number, unknown>)[key] as Record<string, unknown>;
  }
  (cur as Record<string, unknown>)[segs[segs.length - 1]!] = value;
  return out;
}

function objectPath(k: Kind, name: string): string {
  return `${k.collection}/${k.kind === 'CSIDriver' ? `${name}.example.com` : name}`;
}

function full(k: Kind, name: string): Obj {
  return { apiVersion: k.apiVersion, kind: k.kind, ...k.valid(name) };
}

const label = (c: BadField): string => `${c.kind} ${c.path} = ${JSON.stringify(c.value)}`;

describe('hostile bodies: wrong JSON types', () => {
  let s: HostileServer;
  /** The current seed object of each kind (created once; every refused write must leave it as is). */
  const seeds = new Map<string, Obj>();

  beforeAll(async () => {
    s = await startHostileServer();
    for (const k of Object.values(KINDS)) {
      const r = await send(s, 'POST', k.collection, full(k, 'seed'));
      if (r.status !== 201) throw new Error(`seed ${k.kind}: ${r.status} ${r.text}`);
      seeds.set(k.kind, r.body as Obj);
    }
  });
  afterAll(async () => {
    await s?.close();
  });

  /** Runs `write`, then checks that the server is ready and the kind's collection did not change. */
  async function refusedWithoutWrite(
    k: Kind,
    write: () => Promise<{ status: number; body: any }>,
  ): Promise<{ status: number; body: any }> {
    const before = await snapshot(s, k.collection);
    const r = await write();
    await expectReady(s);
    expect(await snapshot(s, k.collection)).toEqual(before);
    return r;
  }

  const badRequest = (k: Kind, want: string) => ({
    kind: 'Status',
    apiVersion: 'v1',
    status: 'Failure',
    reason: 'BadRequest',
    code: 400,
    message: `${k.kind} in version "v1" cannot be handled as a ${k.kind}: ${want}`,
  });

  it.each(CASES.map((c) => [label(c), c] as const))('create %s → 400', async (_, c) => {
    const k = KINDS[c.kind]!;
    const r = await refusedWithoutWrite(k, () =>
      send(s, 'POST', k.collection, withField(full(k, 'created'), c.path, c.value)),
    );
    expect(r.body).toMatchObject(badRequest(k, c.want));
    expect(r.status).toBe(400);
  });

  it.each(CASES.map((c) => [label(c), c] as const))('update %s → 400', async (_, c) => {
    const k = KINDS[c.kind]!;
    const seed = seeds.get(k.kind)!;
    const r = await refusedWithoutWrite(k, () =>
      send(s, 'PUT', objectPath(k, 'seed'), withField(seed, c.path, c.value)),
    );
    expect(r.body).toMatchObject(badRequest(k, c.want));
  });

  it.each(CASES.filter((c) => c.status).map((c) => [label(c), c] as const))('status update %s → 400', async (_, c) => {
    const k = KINDS[c.kind]!;
    const seed = seeds.get(k.kind)!;
    const r = await refusedWithoutWrite(k, () =>
      send(s, 'PUT', `${objectPath(k, 'seed')}/status`, withField(seed, c.path, c.value)),
    );
    expect(r.body).toMatchObject(badRequest(k, c.want));
  });

  const PATCHES = [
    {
      type: 'merge',
      contentType: 'application/merge-patch+json',
      body: (seed: Obj, c: BadField) => withField(seed, c.path, c.value),
    },
    {
      type: 'strategic',
      contentType: 'application/strategic-merge-patch+json',
      body: (seed: Obj, c: BadField) => withField(seed, c.path, c.value),
    },
    {
      type: 'json',
      contentType: 'application/json-patch+json',
      body: (seed: Obj, c: BadField) => {
        const top = c.path.split('.')[0]!;
        return [{ op: 'add', path: `/${top}`, value: withField(seed, c.path, c.value)[top] }];
      },
    },
  ] as const;

  // Patches of metadata itself (a list where an object belongs) are refused earlier by the patch
  // engines; the wrong types inside objects are what reach the decoder.
  const patchCases = CASES.filter((c) => c.path !== 'metadata');
  describe.each(PATCHES)('$type patch', (p) => {
    it.each(patchCases.map((c) => [label(c), c] as const))('%s → 422 on `patch`', async (_, c) => {
      const k = KINDS[c.kind]!;
      const seed = seeds.get(k.kind)!;
      const path = c.status ? `${objectPath(k, 'seed')}/status` : objectPath(k, 'seed');
      const r = await refusedWithoutWrite(k, () =>
        send(s, 'PATCH', path, p.body(seed, c), { contentType: p.contentType }),
      );
      expect(r.status).toBe(422);
      expect(r.body).toMatchObject({ kind: 'Status', reason: 'Invalid', code: 422 });
      expect(r.body.details.causes).toHaveLength(1);
      expect(r.body.details.causes[0]).toMatchObject({ reason: 'FieldValueInvalid', field: 'patch' });
      expect(r.body.details.causes[0].message).toMatch(/^Invalid value: ".*": /s);
      expect(r.body.details.causes[0].message.endsWith(`: ${c.want}`)).toBe(true);
      expect(r.body.message.startsWith(' "" is invalid: patch: Invalid value: ')).toBe(true);
    });
  });

  it('pods/binding with a wrong-typed target → 400, the pod stays unscheduled', async () => {
    const k = KINDS.Pod!;
    const r = await refusedWithoutWrite(k, () =>
      send(s, 'POST', `${objectPath(k, 'seed')}/binding`, {
        apiVersion: 'v1',
        kind: 'Binding',
        metadata: { name: 'seed' },
        target: 'node-1',
      }),
    );
    expect(r.body).toMatchObject({
      code: 400,
      reason: 'BadRequest',
      message: `Binding in version "v1" cannot be handled as a Binding: ${into('string', 'Binding.target', 'v1.ObjectReference')}`,
    });
  });

  it('namespaces/finalize with a wrong-typed finalizer list → 400', async () => {
    const k = KINDS.Namespace!;
    const seed = seeds.get('Namespace')!;
    const r = await refusedWithoutWrite(k, () =>
      send(s, 'PUT', `${objectPath(k, 'seed')}/finalize`, withField(seed, 'spec.finalizers', 'kubernetes')),
    );
    expect(r.body).toMatchObject(badRequest(k, into('string', 'NamespaceSpec.spec.finalizers', '[]v1.FinalizerName')));
  });

  it('a YAML body is decoded by the same rules', async () => {
    const k = KINDS.PersistentVolume!;
    const yaml =
      'apiVersion: v1\nkind: PersistentVolume\nmetadata:\n  name: yaml-pv\n  labels: [a]\nspec:\n  capacity: {storage: 1Gi}\n  accessModes: [ReadWriteOnce]\n  hostPath: {path: /tmp/y}\n';
    const r = await refusedWithoutWrite(k, () =>
      send(s, 'POST', k.collection, yaml, { contentType: 'application/yaml' }),
    );
    expect(r.body).toMatchObject(badRequest(k, into('array', 'ObjectMeta.metadata.labels', 'map[string]string')));
  });

  it('delete options of the wrong type → 400, nothing deleted', async () => {
    const k = KINDS.ConfigMap!;
    const r = await refusedWithoutWrite(k, () =>
      send(s, 'DELETE', objectPath(k, 'seed'), { gracePeriodSeconds: 'now' }),
    );
    expect(r.status).toBe(400);
    expect(r.body.message).toContain(into('string', 'DeleteOptions.gracePeriodSeconds', 'int64'));
  });

  it('accepts what Go accepts: null as the zero value, a JSON number as a Quantity', async () => {
    const k = KINDS.PersistentVolume!;
    const body = withField(withField(full(k, 'lenient'), 'metadata.labels', null), 'spec.capacity.storage', 5);
    const r = await send(s, 'POST', k.collection, body);
    expect(r.status).toBe(201);
    expect(r.body.metadata.labels).toBeUndefined();
    expect(r.body.spec.capacity).toEqual({ storage: '5' });
    const got = await send(s, 'GET', objectPath(k, 'lenient'));
    expect(got.body.spec.capacity).toEqual({ storage: '5' });
  });
});
