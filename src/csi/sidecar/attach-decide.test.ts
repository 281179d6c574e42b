import type { PersistentVolume } from 'kubernetes-types/core/v1.js';
import type { VolumeAttachment } from 'kubernetes-types/storage/v1.js';
import { describe, expect, it } from 'vitest';
import { decideAttachment, pvFinalizerAction } from './attach-decide.js';
import { pvCapability } from './capabilities.js';

const D = 'd.example.com';
const F = 'external-attacher/d-example-com';
const va = (
  o: { attacher?: string; fins?: string[]; attached?: boolean; deleting?: boolean; pv?: string | null } = {},
): VolumeAttachment => ({
  metadata: {
    name: 'va',
    finalizers: o.fins ?? [],
    ...(o.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
  },
  spec: {
    attacher: o.attacher ?? D,
    nodeName: 'n1',
    source: o.pv === null ? {} : { persistentVolumeName: o.pv ?? 'pv1' },
  },
  ...(o.attached !== undefined ? { status: { attached: o.attached } } : {}),
});

describe('decideAttachment', () => {
  it.each([
    { name: 'another attacher', v: va({ attacher: 'x' }), want: 'skip' },
    { name: 'new', v: va(), want: 'addFinalizer' },
    { name: 'finalizer, not attached', v: va({ fins: [F] }), want: 'attach' },
    { name: 'attached', v: va({ fins: [F], attached: true }), want: 'skip' },
    { name: 'deleted, attached', v: va({ fins: [F], attached: true, deleting: true }), want: 'detach' },
    { name: 'deleted, ours gone', v: va({ fins: ['other'], deleting: true }), want: 'skip' },
    { name: 'deleted inline volume', v: va({ fins: [F], deleting: true, pv: null }), want: 'removeFinalizer' },
    { name: 'inline volume', v: va({ pv: null }), want: 'skip' },
  ])('$name → $want', ({ v, want }) => expect(decideAttachment(v, D, F).kind).toBe(want));
});

describe('pvFinalizerAction', () => {
  const pv = (fins: string[], deleting = false): PersistentVolume => ({
    metadata: { name: 'pv1', finalizers: fins, ...(deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
    spec: { csi: { driver: D, volumeHandle: 'h' } },
  });
  it.each([
    { name: 'referenced, no finalizer', p: pv([]), ref: true, want: 'add' },
    { name: 'referenced, being deleted', p: pv([F], true), ref: true, want: 'none' },
    { name: 'unreferenced, being deleted', p: pv([F], true), ref: false, want: 'remove' },
    { name: 'unreferenced, live', p: pv([F]), ref: false, want: 'none' },
  ])('$name → $want', ({ p, ref, want }) => expect(pvFinalizerAction(p, D, F, ref)).toBe(want));
});

describe('pvCapability', () => {
  it.each([
    { modes: ['ReadWriteOnce'], want: 'SINGLE_NODE_WRITER' },
    { modes: ['ReadOnlyMany'], want: 'MULTI_NODE_READER_ONLY' },
    { modes: ['ReadWriteOnce', 'ReadOnlyMany'], want: 'SINGLE_NODE_WRITER' },
    { modes: ['ReadWriteMany', 'ReadOnlyMany'], want: 'MULTI_NODE_MULTI_WRITER' },
  ])('$modes → $want', ({ modes, want }) => {
    const cap = pvCapability(
      { spec: { accessModes: modes, csi: { driver: D, volumeHandle: 'h', fsType: 'xfs' }, mountOptions: ['a'] } },
      false,
    );
    expect(cap.accessMode?.mode).toBe(want);
    expect(cap.mount).toEqual({ fsType: 'xfs', mountFlags: ['a'] });
  });
});
