import { describe, expect, it } from 'vitest';
import { csiNodeResource as def } from './csinode.js';
import type { KubeObject } from './types.js';
import { admission, clone, texts } from './storage.test-kit.js';

function node(drivers: unknown[]): KubeObject {
  return { apiVersion: 'storage.k8s.io/v1', kind: 'CSINode', metadata: { name: 'node1' }, spec: { drivers } };
}
const good = {
  name: 'hostpath.csi.k8s.io',
  nodeID: 'node1',
  topologyKeys: ['topology.hostpath.csi/node'],
  allocatable: { count: 10 },
};

describe('CSINode create', () => {
  it('accepts a well-formed driver', () => {
    expect(def.validateCreate(node([good]), admission())).toEqual([]);
  });
  it.each([
    {
      name: 'driver name required',
      d: [{ ...good, name: '' }],
      want: [
        'spec.drivers[0].name: Required value',
        expect.stringContaining('spec.drivers[0].name: Invalid value: ""'),
      ],
    },
    { name: 'nodeID required', d: [{ ...good, nodeID: '' }], want: ['spec.drivers[0].nodeID: Required value'] },
    {
      name: 'nodeID too long',
      d: [{ ...good, nodeID: 'n'.repeat(257) }],
      want: [`spec.drivers[0].nodeID: Invalid value: "${'n'.repeat(257)}": must be 256 characters or less`],
    },
    {
      name: 'negative count',
      d: [{ ...good, allocatable: { count: -1 } }],
      want: ['spec.drivers[0].allocatable.count: Invalid value: -1: must be greater than or equal to 0'],
    },
    {
      name: 'duplicate driver',
      d: [good, good],
      want: ['spec.drivers[1].name: Duplicate value: "hostpath.csi.k8s.io"'],
    },
    {
      name: 'duplicate topology key',
      d: [{ ...good, topologyKeys: ['a', 'a'] }],
      want: ['spec.drivers[0]: Duplicate value: "a"'],
    },
    {
      name: 'bad topology key',
      d: [{ ...good, topologyKeys: ['a/b/c'] }],
      want: [expect.stringContaining('spec.drivers[0]: Invalid value: []string{"a/b/c"}: a qualified name')],
    },
  ])('$name', ({ d, want }) => expect(texts(def.validateCreate(node(d), admission()))).toEqual(want));
});

describe('CSINode update', () => {
  const stored = node([good]);
  it('drivers may be added and removed', () => {
    expect(def.validateUpdate(node([good, { ...good, name: 'other.csi' }]), stored, admission())).toEqual([]);
    expect(def.validateUpdate(node([]), stored, admission())).toEqual([]);
  });
  it('an existing driver entry is immutable', () => {
    const errs = texts(def.validateUpdate(node([{ ...good, nodeID: 'other' }]), stored, admission()));
    expect(errs).toEqual([
      expect.stringMatching(/^CSINodeDriver: Invalid value: .*"nodeID":"other".*: field is immutable$/),
    ]);
  });
});

describe('CSINode table', () => {
  it('counts drivers', () => {
    const n = clone(node([good, { ...good, name: 'b' }]));
    n.metadata.creationTimestamp = '2026-01-01T00:00:00Z';
    expect(def.columns.map((c) => c.name)).toEqual(['Name', 'Drivers', 'Age']);
    expect(def.row(n, Date.parse('2026-01-01T00:00:10Z'))).toEqual(['node1', 2, '10s']);
  });
});
