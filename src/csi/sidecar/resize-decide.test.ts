import type { PersistentVolume, PersistentVolumeClaim } from 'kubernetes-types/core/v1.js';
import { describe, expect, it } from 'vitest';
import { decideResize, isInfeasible, withConditions } from './resize-decide.js';

const D = 'd';
const claim = (
  request: string,
  status: Partial<NonNullable<PersistentVolumeClaim['status']>> = {},
): PersistentVolumeClaim => ({
  metadata: { name: 'c', namespace: 'ns', uid: 'u1' },
  spec: { volumeName: 'pv1', resources: { requests: { storage: request } } },
  status: { phase: 'Bound', capacity: { storage: '1Gi' }, ...status },
});
const pv = (cap: string, driver = D): PersistentVolume => ({
  metadata: { name: 'pv1' },
  spec: { capacity: { storage: cap }, claimRef: { uid: 'u1' }, csi: { driver, volumeHandle: 'h' } },
});
const Gi = 1n << 30n;

describe('decideResize', () => {
  it.each([
    { name: 'same size', c: claim('1Gi'), p: pv('1Gi'), want: { kind: 'skip' } },
    { name: 'grown', c: claim('2Gi'), p: pv('1Gi'), want: { kind: 'expand', bytes: 2n * Gi, pvBytes: Gi } },
    { name: 'other driver', c: claim('2Gi'), p: pv('1Gi', 'x'), want: { kind: 'skip' } },
    { name: 'unbound', c: { ...claim('2Gi'), status: { phase: 'Pending' } }, p: pv('1Gi'), want: { kind: 'skip' } },
    {
      name: 'infeasible, same request',
      c: claim('5Gi', {
        allocatedResources: { storage: '5Gi' },
        allocatedResourceStatuses: { storage: 'ControllerResizeFailed' },
      }),
      p: pv('1Gi'),
      want: { kind: 'skip' },
    },
    {
      name: 'infeasible, lowered request → new attempt',
      c: claim('3Gi', {
        allocatedResources: { storage: '5Gi' },
        allocatedResourceStatuses: { storage: 'ControllerResizeFailed' },
      }),
      p: pv('1Gi'),
      want: { kind: 'expand', bytes: 3n * Gi, pvBytes: Gi },
    },
    {
      name: 'lowered back to the current size → abandon',
      c: claim('1Gi', {
        allocatedResources: { storage: '5Gi' },
        allocatedResourceStatuses: { storage: 'ControllerResizeInProgress' },
      }),
      p: pv('1Gi'),
      want: { kind: 'abandon', pvBytes: Gi },
    },
    {
      name: 'PV grown but the status write was lost → finish by expanding to the PV size',
      c: claim('2Gi', {
        allocatedResources: { storage: '2Gi' },
        allocatedResourceStatuses: { storage: 'ControllerResizeInProgress' },
      }),
      p: pv('2Gi'),
      want: { kind: 'expand', bytes: 2n * Gi, pvBytes: 2n * Gi },
    },
    {
      name: "node expansion pending is the node's",
      c: claim('2Gi', { allocatedResourceStatuses: { storage: 'NodeResizePending' } }),
      p: pv('2Gi'),
      want: { kind: 'skip' },
    },
  ])('$name', ({ c, p, want }) => expect(decideResize(c, p, D)).toMatchObject(want));
});

describe('withConditions', () => {
  it("replaces resize conditions and keeps a True condition's transition time", () => {
    const cur = [
      { type: 'Resizing', status: 'True', lastTransitionTime: 't0' },
      { type: 'Other', status: 'True' },
    ];
    expect(withConditions(cur, ['Resizing'], { type: 'FileSystemResizePending', message: 'm', nowIso: 't1' })).toEqual([
      { type: 'Other', status: 'True' },
      { type: 'FileSystemResizePending', status: 'True', lastProbeTime: 't1', lastTransitionTime: 't1', message: 'm' },
    ]);
    expect(withConditions(cur, [], { type: 'Resizing', nowIso: 't2' })[1]?.lastTransitionTime).toBe('t0');
  });
});

it('isInfeasible: the codes a retry of the same size cannot fix', () => {
  expect(['INVALID_ARGUMENT', 'OUT_OF_RANGE', 'NOT_FOUND'].every(isInfeasible)).toBe(true);
  expect(isInfeasible('RESOURCE_EXHAUSTED')).toBe(false);
});
