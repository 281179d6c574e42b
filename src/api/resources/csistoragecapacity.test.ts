import { describe, expect, it } from 'vitest';
import { csiStorageCapacityResource as def } from './csistoragecapacity.js';
import type { KubeObject } from './types.js';
import { admission, clone, texts } from './storage.test-kit.js';

function cap(extra: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'CSIStorageCapacity',
    metadata: { name: 'csisc-1', namespace: 'kube-system' },
    storageClassName: 'fast',
    nodeTopology: { matchLabels: { 'topology.hostpath.csi/node': 'node1' } },
    capacity: '10Gi',
    ...extra,
  };
}

describe('CSIStorageCapacity', () => {
  it('accepts a well-formed object', () => {
    expect(def.validateCreate(cap(), admission())).toEqual([]);
    expect(def).toMatchObject({ namespaced: true, hasStatus: false, plural: 'csistoragecapacities' });
  });
  it.each([
    {
      name: 'class name required (reported as invalid)',
      extra: { storageClassName: '' },
      want: [expect.stringContaining('storageClassName: Invalid value: "": a lowercase RFC 1123 subdomain')],
    },
    {
      name: 'negative capacity',
      extra: { capacity: '-1' },
      want: ['capacity: Invalid value: "-1": must be greater than or equal to 0'],
    },
    { name: 'zero capacity is fine', extra: { capacity: '0' }, want: [] },
    {
      name: 'bad topology selector',
      extra: { nodeTopology: { matchExpressions: [{ key: 'k', operator: 'Near' }] } },
      want: ['nodeTopology.matchExpressions[0].operator: Invalid value: "Near": not a valid selector operator'],
    },
  ])('$name', ({ extra, want }) => expect(texts(def.validateCreate(cap(extra), admission()))).toEqual(want));

  it('storageClassName and nodeTopology are immutable; capacity is not', () => {
    const stored = cap();
    const changed = clone(stored);
    changed.capacity = '20Gi';
    expect(def.validateUpdate(changed, stored, admission())).toEqual([]);
    changed.storageClassName = 'slow';
    changed.nodeTopology = {};
    expect(texts(def.validateUpdate(changed, stored, admission()))).toEqual([
      'nodeTopology: Invalid value: {}: field is immutable',
      'storageClassName: Invalid value: "slow": field is immutable',
    ]);
  });

  it('canonicalizes capacity', () => {
    const c = clone(cap({ capacity: '10240Mi', maximumVolumeSize: '1000000' }));
    def.prepareForCreate(c, admission());
    expect(c).toMatchObject({ capacity: '10Gi', maximumVolumeSize: '1M' });
  });

  it('prints name, class and canonical capacity (no AGE column in kube)', () => {
    expect(def.columns.map((c) => c.name)).toEqual(['Name', 'StorageClassName', 'Capacity']);
    expect(def.row(cap({ capacity: '10240Mi' }), 0)).toEqual(['csisc-1', 'fast', '10Gi']);
    expect(def.row(cap({ capacity: undefined }), 0)).toEqual(['csisc-1', 'fast', '<unset>']);
  });
});
