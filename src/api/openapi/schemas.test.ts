import { describe, expect, it } from 'vitest';
import { definitionNameFor, definitions, patchMetaFor, refName, resolveRef, schemaAt, schemaFor } from './schemas.js';

const KINDS: Array<[string, string, string, string]> = [
  ['', 'v1', 'Namespace', 'io.k8s.api.core.v1.Namespace'],
  ['', 'v1', 'Node', 'io.k8s.api.core.v1.Node'],
  ['', 'v1', 'Pod', 'io.k8s.api.core.v1.Pod'],
  ['', 'v1', 'PersistentVolume', 'io.k8s.api.core.v1.PersistentVolume'],
  ['', 'v1', 'PersistentVolumeClaim', 'io.k8s.api.core.v1.PersistentVolumeClaim'],
  ['', 'v1', 'Event', 'io.k8s.api.core.v1.Event'],
  ['', 'v1', 'Secret', 'io.k8s.api.core.v1.Secret'],
  ['', 'v1', 'ConfigMap', 'io.k8s.api.core.v1.ConfigMap'],
  ['storage.k8s.io', 'v1', 'StorageClass', 'io.k8s.api.storage.v1.StorageClass'],
  ['storage.k8s.io', 'v1', 'CSIDriver', 'io.k8s.api.storage.v1.CSIDriver'],
  ['storage.k8s.io', 'v1', 'CSINode', 'io.k8s.api.storage.v1.CSINode'],
  ['storage.k8s.io', 'v1', 'VolumeAttachment', 'io.k8s.api.storage.v1.VolumeAttachment'],
  ['storage.k8s.io', 'v1', 'CSIStorageCapacity', 'io.k8s.api.storage.v1.CSIStorageCapacity'],
  ['coordination.k8s.io', 'v1', 'Lease', 'io.k8s.api.coordination.v1.Lease'],
];

describe('schemaFor', () => {
  it.each(KINDS)('%s/%s %s → %s', (group, version, kind, name) => {
    expect(definitionNameFor(group, version, kind)).toBe(name);
    const s = schemaFor(group, version, kind);
    expect(s.type).toBe('object');
    expect(s['x-kubernetes-group-version-kind']).toEqual([{ group, version, kind }]);
    expect(Object.keys(s.properties ?? {})).toEqual(expect.arrayContaining(['apiVersion', 'kind', 'metadata']));
    expect(refName(s.properties?.metadata ?? {})).toBe('io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta');
  });

  it('throws for a kind it does not know', () => {
    expect(() => schemaFor('apps', 'v1', 'NoSuchKind')).toThrow(/no schema/);
  });

  it('resolves every reference in every definition', () => {
    const defs = definitions();
    const refs: string[] = [];
    const walk = (v: unknown): void => {
      if (Array.isArray(v)) v.forEach(walk);
      else if (v && typeof v === 'object') {
        for (const [k, x] of Object.entries(v)) {
          if (k === '$ref' && typeof x === 'string') refs.push(x);
          else walk(x);
        }
      }
    };
    walk(defs);
    expect(refs.length).toBeGreaterThan(100);
    for (const r of refs) expect(defs[r.replace('#/components/schemas/', '')], r).toBeDefined();
  });
});

describe('special types', () => {
  it.each([
    [
      'PV capacity values are Quantity',
      'PersistentVolume',
      ['spec', 'capacity', 'storage'],
      { 'x-kubernetes-int-or-string': true },
    ],
    ['creationTimestamp is Time', 'Pod', ['metadata', 'creationTimestamp'], { type: 'string', format: 'date-time' }],
    ['lease renewTime is MicroTime', 'Lease', ['spec', 'renewTime'], { type: 'string', format: 'date-time' }],
    [
      'probe port is IntOrString',
      'Pod',
      ['spec', 'containers', 'livenessProbe', 'httpGet', 'port'],
      { format: 'int-or-string' },
    ],
    ['secret data is bytes', 'Secret', ['data', 'any-key'], { type: 'string', format: 'byte' }],
    [
      'labels are a string map',
      'Pod',
      ['metadata', 'labels'],
      { type: 'object', additionalProperties: { type: 'string' } },
    ],
    [
      'managedFields fieldsV1 is free-form',
      'Pod',
      ['metadata', 'managedFields', 'fieldsV1'],
      { 'x-kubernetes-preserve-unknown-fields': true },
    ],
    [
      'int32 keeps its format',
      'Pod',
      ['spec', 'containers', 'ports', 'containerPort'],
      { type: 'integer', format: 'int32' },
    ],
  ] as const)('%s', (_name, kind, path, want) => {
    const group = kind === 'Lease' ? 'coordination.k8s.io' : '';
    expect(schemaAt(schemaFor(group, 'v1', kind), path)).toMatchObject(want);
  });

  it('keeps fields of v1.30 and drops newer ones', () => {
    const podSpec = resolveRef(schemaFor('', 'v1', 'Pod').properties?.spec ?? {});
    expect(podSpec.properties?.schedulingGates).toBeDefined();
    expect(podSpec.properties?.hostnameOverride).toBeUndefined(); // v1.34
  });

  it('marks required fields', () => {
    expect(resolveRef({ $ref: '#/components/schemas/io.k8s.api.core.v1.Container' }).required).toEqual(['name']);
    expect(resolveRef({ $ref: '#/components/schemas/io.k8s.api.storage.v1.CSIDriverSpec' }).required).toBeUndefined();
  });
});

describe('patchMetaFor', () => {
  it.each([
    ['Pod', ['spec', 'containers'], { strategy: 'merge', mergeKey: 'name' }],
    ['Pod', ['spec', 'initContainers'], { strategy: 'merge', mergeKey: 'name' }],
    ['Pod', ['spec', 'volumes'], { strategy: 'merge,retainKeys', mergeKey: 'name' }],
    ['Pod', ['spec', 'containers', 'env'], { strategy: 'merge', mergeKey: 'name' }],
    ['Pod', ['spec', 'containers', 'ports'], { strategy: 'merge', mergeKey: 'containerPort' }],
    ['Pod', ['spec', 'containers', 'volumeMounts'], { strategy: 'merge', mergeKey: 'mountPath' }],
    ['Pod', ['spec', 'containers', 'volumeDevices'], { strategy: 'merge', mergeKey: 'devicePath' }],
    ['Pod', ['spec', 'tolerations'], { strategy: 'replace' }],
    ['Pod', ['status', 'conditions'], { strategy: 'merge', mergeKey: 'type' }],
    ['Pod', ['metadata', 'finalizers'], { strategy: 'merge' }],
    ['Pod', ['metadata', 'ownerReferences'], { strategy: 'merge', mergeKey: 'uid' }],
    ['Pod', ['metadata', 'labels'], { strategy: 'replace' }],
    ['Pod', ['spec', 'nosuchfield'], { strategy: 'replace' }],
    ['Pod', [], { strategy: 'replace' }],
    ['Node', ['status', 'addresses'], { strategy: 'merge', mergeKey: 'type' }],
    ['Node', ['status', 'conditions'], { strategy: 'merge', mergeKey: 'type' }],
    ['PersistentVolumeClaim', ['status', 'conditions'], { strategy: 'merge', mergeKey: 'type' }],
    ['PersistentVolume', ['spec', 'accessModes'], { strategy: 'replace' }],
  ] as const)('%s %j', (kind, path, want) => {
    expect(patchMetaFor('', 'v1', kind)(path)).toEqual(want);
  });

  it('CSINode drivers merge by name', () => {
    expect(patchMetaFor('storage.k8s.io', 'v1', 'CSINode')(['spec', 'drivers'])).toEqual({
      strategy: 'merge',
      mergeKey: 'name',
    });
  });

  it('carries list types for server-side consumers', () => {
    const containers = resolveRef(schemaFor('', 'v1', 'Pod').properties?.spec ?? {}).properties?.containers;
    expect(containers?.['x-kubernetes-list-type']).toBe('map');
    expect(containers?.['x-kubernetes-list-map-keys']).toEqual(['name']);
  });
});
