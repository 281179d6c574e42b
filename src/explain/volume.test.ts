import { describe, expect, it } from 'vitest';
import { pv, pvc } from '../controllers/persistentvolume/fixtures.test-kit.js';
import type { VolumeAttachment } from './source.js';
import { memorySource } from './source.test-kit.js';
import { explainAttachment, explainVolume } from './volume.js';

describe('explainVolume', () => {
  it('an Available volume: which unbound claims could take it and why the others cannot', () => {
    const v = pv('v', '1Gi');
    const e = explainVolume(v, memorySource({ volumes: [v], claims: [pvc('fits', '1Gi'), pvc('big', '5Gi')] }));
    expect(e).toMatchObject({ ready: true, summary: 'available; 1 unbound claim(s) could take it' });
    expect(e.findings.map((f) => f.message)).toEqual([
      'claim ns/fits could take it',
      'claim ns/big: capacity 1Gi is smaller than the 5Gi requested',
    ]);
  });

  it('Released under Retain, Released under Delete with the last error', () => {
    const retained = pv('r', '1Gi', { phase: 'Released', claim: { name: 'gone', uid: 'u' } });
    expect(explainVolume(retained, memorySource({})).summary).toMatch(/Retain policy keeps it/);
    const del = pv('d', '1Gi', { phase: 'Released', policy: 'Delete', claim: { name: 'gone', uid: 'u' } });
    const ev = {
      metadata: { name: 'd.1', namespace: 'default' },
      involvedObject: { kind: 'PersistentVolume', name: 'd' },
      type: 'Warning',
      reason: 'VolumeFailedDelete',
      message: 'rpc error: code = Internal desc = busy',
    };
    expect(explainVolume(del, memorySource({ events: [ev] })).summary).toBe(
      'released; the Delete reclaim policy is running and failed: VolumeFailedDelete: rpc error: code = Internal desc = busy',
    );
  });
});

describe('explainAttachment', () => {
  const va = (status: VolumeAttachment['status'], deleting = false): VolumeAttachment => ({
    metadata: { name: 'csi-1', ...(deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
    spec: { attacher: 'd.csi', nodeName: 'n1', source: { persistentVolumeName: 'pv1' } },
    ...(status ? { status } : {}),
  });
  it.each([
    { name: 'attached', a: va({ attached: true }), summary: 'volume pv1 on node n1 is attached' },
    { name: 'waiting', a: va(undefined), summary: "waiting for d.csi's attacher to attach volume pv1 on node n1" },
    {
      name: 'attach error',
      a: va({ attached: false, attachError: { message: 'rpc error: code = NotFound' } }),
      summary: 'attaching volume pv1 on node n1 failed: rpc error: code = NotFound',
    },
    {
      name: 'detach error',
      a: va({ attached: true, detachError: { message: 'still published' } }, true),
      summary: 'detaching volume pv1 on node n1 failed: still published',
    },
  ])('$name', ({ a, summary }) => {
    expect(explainAttachment(a, memorySource({})).summary).toBe(summary);
  });
});
