import { status } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import type { VolumeCapability__Output } from '../proto/types.js';
import { CsiStatusError } from './errors.js';
import {
  capacityCompatible,
  chooseCapacity,
  DEFAULT_VOLUME_BYTES,
  paginate,
  parseCapability,
  parseCreateCapabilities,
  topologyAllows,
} from './validate.js';

const range = (requiredBytes: number, limitBytes = 0) => ({ requiredBytes, limitBytes });
const code = (fn: () => unknown): number | undefined => {
  try {
    fn();
    return undefined;
  } catch (e) {
    return e instanceof CsiStatusError ? e.grpcCode : -1;
  }
};
const mountCap = (mode: string): VolumeCapability__Output =>
  ({
    mount: { fsType: '', mountFlags: [], volumeMountGroup: '' },
    accessMode: { mode },
    accessType: 'mount',
  }) as VolumeCapability__Output;

describe('chooseCapacity', () => {
  it.each([
    { name: 'no range → default', r: null, max: undefined, want: DEFAULT_VOLUME_BYTES },
    { name: 'rounds up to 4 KiB', r: range(1000), max: undefined, want: 4096 },
    { name: 'exact multiple kept', r: range(1 << 20), max: undefined, want: 1 << 20 },
    { name: 'rounding capped by limit', r: range(1000, 2000), max: undefined, want: 2000 },
    { name: 'default capped by limit', r: range(0, 1 << 20), max: undefined, want: 1 << 20 },
    { name: 'source minimum raises size', r: range(4096), max: undefined, min: 8192, want: 8192 },
  ])('$name', ({ r, max, min, want }) => expect(chooseCapacity(r, max, min)).toBe(want));

  it.each([
    { name: 'required > limit', r: range(10, 5), max: undefined, want: status.OUT_OF_RANGE },
    { name: 'larger than the total capacity', r: range(2 << 20), max: 1 << 20, want: status.OUT_OF_RANGE },
    { name: 'negative', r: range(-1), max: undefined, want: status.INVALID_ARGUMENT },
    { name: 'limit below the source size', r: range(0, 4096), max: undefined, min: 8192, want: status.OUT_OF_RANGE },
  ])('$name → code $want', ({ r, max, min, want }) => expect(code(() => chooseCapacity(r, max, min))).toBe(want));

  it('capacityCompatible honours both bounds', () => {
    expect(capacityCompatible(100, range(100))).toBe(true);
    expect(capacityCompatible(100, range(101))).toBe(false);
    expect(capacityCompatible(100, range(0, 99))).toBe(false);
    expect(capacityCompatible(100, null)).toBe(true);
  });
});

describe('capabilities', () => {
  it('parses mount and block, rejects missing pieces with INVALID_ARGUMENT', () => {
    expect(parseCapability(mountCap('SINGLE_NODE_WRITER'), 'c').kind).toBe('mount');
    expect(
      parseCapability(
        { block: {}, accessMode: { mode: 'SINGLE_NODE_WRITER' }, accessType: 'block' } as VolumeCapability__Output,
        'c',
      ).kind,
    ).toBe('block');
    expect(code(() => parseCapability(null, 'volume_capability'))).toBe(status.INVALID_ARGUMENT);
    expect(
      code(() => parseCapability({ accessMode: { mode: 'SINGLE_NODE_WRITER' } } as VolumeCapability__Output, 'c')),
    ).toBe(status.INVALID_ARGUMENT);
    expect(code(() => parseCapability(mountCap('UNKNOWN'), 'c'))).toBe(status.INVALID_ARGUMENT);
  });
  it('refuses multi-node modes at create time', () => {
    expect(code(() => parseCreateCapabilities([mountCap('MULTI_NODE_MULTI_WRITER')]))).toBe(status.INVALID_ARGUMENT);
    expect(code(() => parseCreateCapabilities([]))).toBe(status.INVALID_ARGUMENT);
    expect(parseCreateCapabilities([mountCap('SINGLE_NODE_MULTI_WRITER')])).toHaveLength(1);
  });
});

describe('topologyAllows', () => {
  const k = 'topology.hostpath.csi.stowage.io/node';
  it.each([
    { name: 'no requirement', req: null, want: true },
    { name: 'requisite names us', req: { requisite: [{ segments: { [k]: 'n1' } }], preferred: [] }, want: true },
    {
      name: 'requisite names another node',
      req: { requisite: [{ segments: { [k]: 'n2' } }], preferred: [] },
      want: false,
    },
  ])('$name', ({ req, want }) => expect(topologyAllows(req, k, 'n1')).toBe(want));
});

describe('paginate', () => {
  const ids = [
    '00000000-0000-0000-0000-000000000001',
    '00000000-0000-0000-0000-000000000002',
    '00000000-0000-0000-0000-000000000003',
  ];
  it('pages by max_entries and continues after the token', () => {
    const p1 = paginate(ids, 2, '');
    expect(p1).toEqual({ ids: ids.slice(0, 2), nextToken: ids[1] });
    expect(paginate(ids, 2, p1.nextToken)).toEqual({ ids: ids.slice(2), nextToken: '' });
    expect(paginate(ids, 0, '')).toEqual({ ids, nextToken: '' });
  });
  it('accepts a token whose entry was deleted', () => {
    expect(paginate([ids[0]!, ids[2]!], 0, ids[1]!).ids).toEqual([ids[2]]);
  });
  it('invalid token → ABORTED; negative max → INVALID_ARGUMENT', () => {
    expect(code(() => paginate(ids, 0, 'invalid-token'))).toBe(status.ABORTED);
    expect(code(() => paginate(ids, -1, ''))).toBe(status.INVALID_ARGUMENT);
  });
});
