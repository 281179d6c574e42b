import { describe, it, expect } from 'vitest';
import type { Node } from 'kubernetes-types/core/v1.js';
import type { CSINode } from 'kubernetes-types/storage/v1.js';
import { InvalidError } from '../../../util/errors.js';
import {
  ANN_CSI_NODE_ID,
  attachLimitKey,
  csiNodeDriver,
  withCsiNodeDriver,
  withNodeId,
  withTopologyLabels,
  withoutCsiNodeDriver,
} from './node-updates.js';

const node: Node = { metadata: { name: 'n1', uid: 'uid-1' } };

describe('node id annotation', () => {
  it.each<{
    name: string;
    ann: Record<string, string> | undefined;
    driver: string;
    id: string | undefined;
    want: Record<string, string> | undefined;
  }>([
    { name: 'first driver', ann: undefined, driver: 'a', id: 'x', want: { [ANN_CSI_NODE_ID]: '{"a":"x"}' } },
    {
      name: 'merged with others, keys sorted',
      ann: { [ANN_CSI_NODE_ID]: '{"b":"y"}', other: '1' },
      driver: 'a',
      id: 'x',
      want: { [ANN_CSI_NODE_ID]: '{"a":"x","b":"y"}', other: '1' },
    },
    { name: 'unchanged', ann: { [ANN_CSI_NODE_ID]: '{"a":"x"}' }, driver: 'a', id: 'x', want: undefined },
    {
      name: 'removing one of two',
      ann: { [ANN_CSI_NODE_ID]: '{"a":"x","b":"y"}' },
      driver: 'a',
      id: undefined,
      want: { [ANN_CSI_NODE_ID]: '{"b":"y"}' },
    },
    {
      name: 'removing the last deletes the annotation',
      ann: { [ANN_CSI_NODE_ID]: '{"a":"x"}', other: '1' },
      driver: 'a',
      id: undefined,
      want: { other: '1' },
    },
    { name: 'removing an absent driver', ann: {}, driver: 'a', id: undefined, want: undefined },
  ])('$name', ({ ann, driver, id, want }) => {
    expect(withNodeId(ann, driver, id)).toEqual(want);
  });

  it('refuses a malformed annotation', () => {
    expect(() => withNodeId({ [ANN_CSI_NODE_ID]: '[1]' }, 'a', 'x')).toThrow(InvalidError);
    expect(() => withNodeId({ [ANN_CSI_NODE_ID]: '{' }, 'a', 'x')).toThrow(InvalidError);
  });
});

describe('topology labels', () => {
  it('adds missing labels and reports which', () => {
    expect(
      withTopologyLabels({ 'kubernetes.io/hostname': 'n1', zone: 'z1' }, { zone: 'z1', 'topo/node': 'n1' }),
    ).toEqual({
      labels: { 'kubernetes.io/hostname': 'n1', zone: 'z1', 'topo/node': 'n1' },
      added: ['topo/node'],
    });
  });
  it('is unchanged when every label is present', () => {
    expect(withTopologyLabels({ zone: 'z1' }, { zone: 'z1' })).toBeUndefined();
  });
  it('refuses a colliding value', () => {
    expect(() => withTopologyLabels({ zone: 'z1' }, { zone: 'z2' })).toThrow(/collides/);
  });
});

describe('CSINode drivers', () => {
  const entry = csiNodeDriver('a', 'x', ['t/b', 't/a'], 0);

  it('creates the CSINode owned by the Node', () => {
    const c = withCsiNodeDriver(undefined, node, entry);
    expect(c?.metadata?.name).toBe('n1');
    expect(c?.metadata?.ownerReferences).toEqual([{ apiVersion: 'v1', kind: 'Node', name: 'n1', uid: 'uid-1' }]);
    expect(c?.spec.drivers).toEqual([{ name: 'a', nodeID: 'x', topologyKeys: ['t/a', 't/b'] }]);
  });

  it('sets allocatable only for a positive limit', () => {
    expect(csiNodeDriver('a', 'x', [], 5).allocatable).toEqual({ count: 5 });
    expect(csiNodeDriver('a', 'x', [], 0)).not.toHaveProperty('allocatable');
  });

  it('replaces a driver of the same name, keeps others, and skips a no-op', () => {
    const cur: CSINode = {
      metadata: { name: 'n1' },
      spec: {
        drivers: [
          { name: 'b', nodeID: 'y' },
          { name: 'a', nodeID: 'old' },
        ],
      },
    };
    expect(withCsiNodeDriver(cur, node, entry)?.spec.drivers).toEqual([{ name: 'b', nodeID: 'y' }, entry]);
    const same: CSINode = { metadata: { name: 'n1' }, spec: { drivers: [entry] } };
    expect(withCsiNodeDriver(same, node, entry)).toBeUndefined();
  });

  it('removes a driver; absent → unchanged', () => {
    const cur: CSINode = { metadata: { name: 'n1' }, spec: { drivers: [{ name: 'b', nodeID: 'y' }, entry] } };
    expect(withoutCsiNodeDriver(cur, 'a')?.spec.drivers).toEqual([{ name: 'b', nodeID: 'y' }]);
    expect(withoutCsiNodeDriver(cur, 'zzz')).toBeUndefined();
  });
});

describe('attach limit key', () => {
  it('prefixes short names and hashes long ones to at most 63 characters', () => {
    expect(attachLimitKey('hostpath.csi.k8s.io')).toBe('attachable-volumes-csi-hostpath.csi.k8s.io');
    const long = 'a'.repeat(80) + '.example.com';
    const k = attachLimitKey(long);
    expect(k.length).toBeLessThanOrEqual(63);
    expect(k.startsWith('attachable-volumes-csi-aaaa')).toBe(true);
    expect(attachLimitKey(long)).toBe(k);
    expect(attachLimitKey('b'.repeat(80))).not.toBe(k);
  });
});
