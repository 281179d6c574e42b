/**
 * Scenario tests through the controller entry points with a miniature runtime: every write is
 * echoed back as an informer event, enqueued claims are processed, scheduled operations run, and
 * the loop stops when nothing changes. Mirrors the public conformance sample (shared/conformance/pv).
 */
import { describe, expect, it } from 'vitest';
import { handleClaimKey, handleVolumeKey, type Requeue } from './controller.js';
import { Kit, NS, pv, pvc, storageClass } from './fixtures.test-kit.js';

async function settle(k: Kit, seed: Array<['claim' | 'volume', string]>): Promise<void> {
  const queue: Array<['claim' | 'volume', string]> = [...seed];
  const q: Requeue = { claim: (key) => queue.push(['claim', key]), volume: (name) => queue.push(['volume', name]) };
  let seenWrites = 0;
  let seenEnqueued = 0;
  for (let guard = 0; guard < 1000; guard++) {
    const item = queue.shift();
    if (!item) {
      const errors = await k.runOperations();
      void errors;
      if (k.writes.length === seenWrites && k.enqueued.length === seenEnqueued) return;
    } else {
      const [kind, key] = item;
      try {
        if (kind === 'claim') await handleClaimKey(k.ctx, q, key, k.claim(key));
        else await handleVolumeKey(k.ctx, q, key, k.volume(key));
      } catch {
        queue.push(item); // the runtime requeues failures
      }
    }
    for (const w of k.writes.slice(seenWrites)) queue.push([w.op.includes('Claim') ? 'claim' : 'volume', w.name]);
    seenWrites = k.writes.length;
    for (const key of k.enqueued.slice(seenEnqueued)) queue.push(['claim', key]);
    seenEnqueued = k.enqueued.length;
  }
  throw new Error('did not settle');
}

const claimKeyOf = (n: string): string => `${NS}/${n}`;

describe('scenarios (conformance sample)', () => {
  it('integration: 20 identical claims and 20 identical volumes all bind, pairwise', async () => {
    const names = Array.from({ length: 20 }, (_, i) => i + 1);
    const k = new Kit({
      volumes: names.map((i) => pv(`pv-${i}`, '1G', { phase: 'Pending' })),
      claims: names.map((i) => pvc(`claim-${i}`, '1G')),
    });
    await settle(k, [
      ...names.map((i): ['volume', string] => ['volume', `pv-${i}`]),
      ...names.map((i): ['claim', string] => ['claim', claimKeyOf(`claim-${i}`)]),
    ]);
    const used = new Set<string>();
    for (const i of names) {
      const c = k.claim(claimKeyOf(`claim-${i}`));
      expect(c?.status?.phase).toBe('Bound');
      const v = k.volume(c?.spec?.volumeName ?? '');
      expect(v?.status?.phase).toBe('Bound');
      expect(v?.spec?.claimRef?.uid).toBe(c?.metadata?.uid);
      used.add(v?.metadata?.name ?? '');
    }
    expect(used.size).toBe(20);
  });

  it('reclaim/Retain: deleting the claim releases the volume, claimRef kept, no events', async () => {
    const k = new Kit({ volumes: [pv('v1', '1Gi')], claims: [pvc('claim1', '1Gi')] });
    await settle(k, [
      ['volume', 'v1'],
      ['claim', claimKeyOf('claim1')],
    ]);
    expect(k.volume('v1')?.status?.phase).toBe('Bound');
    k.claims.delete(claimKeyOf('claim1'));
    await settle(k, [['claim', claimKeyOf('claim1')]]);
    expect(k.volume('v1')?.status?.phase).toBe('Released');
    expect(k.volume('v1')?.spec?.claimRef).toMatchObject({ name: 'claim1', uid: 'uid-claim1' });
    expect(k.events).toEqual([]);
  });

  it('2-6: a claim naming a volume bound to another claim stays Pending; a forced Bound status is reset', async () => {
    const k = new Kit({ volumes: [pv('v1', '1Gi')], claims: [pvc('claim-a', '1Gi')] });
    await settle(k, [['claim', claimKeyOf('claim-a')]]);
    const b = pvc('claim-b', '1Gi', { volumeName: 'v1', phase: 'Bound' });
    k.claims.set(claimKeyOf('claim-b'), { ...b, metadata: { ...b.metadata, resourceVersion: '1' } });
    await settle(k, [['claim', claimKeyOf('claim-b')]]);
    expect(k.claim(claimKeyOf('claim-b'))?.status?.phase).toBe('Pending');
    expect(k.volume('v1')?.spec?.claimRef?.name).toBe('claim-a');
    expect(k.eventTuples()).toContainEqual([
      'claim-b',
      'Warning',
      'FailedBinding',
      'volume "v1" already bound to a different claim.',
    ]);
  });

  it('a volume deleted under a bound claim makes the claim Lost', async () => {
    const k = new Kit({ volumes: [pv('v1', '1Gi')], claims: [pvc('claim1', '1Gi')] });
    await settle(k, [['claim', claimKeyOf('claim1')]]);
    k.volumes.delete('v1');
    await settle(k, [['volume', 'v1']]);
    expect(k.claim(claimKeyOf('claim1'))?.status?.phase).toBe('Lost');
    expect(k.eventTuples()).toEqual([
      ['claim1', 'Warning', 'ClaimLost', 'Bound claim has lost its PersistentVolume. Data on the volume is lost!'],
    ]);
  });

  it('a claim created before its volume is Available binds without waiting for a resync', async () => {
    const k = new Kit({ volumes: [pv('v1', '1Gi', { phase: 'Pending' })], claims: [pvc('claim1', '1Gi')] });
    await settle(k, [
      ['claim', claimKeyOf('claim1')],
      ['volume', 'v1'],
    ]);
    expect(k.claim(claimKeyOf('claim1'))?.status?.phase).toBe('Bound');
  });

  it('external provisioner: the provisioned PV (pre-bound by UID) completes the bind', async () => {
    const k = new Kit({
      classes: [storageClass('ext', 'example.com/p')],
      claims: [pvc('claim1', '1Gi', { cls: 'ext' })],
    });
    await settle(k, [['claim', claimKeyOf('claim1')]]);
    expect(k.claim(claimKeyOf('claim1'))?.metadata?.annotations?.['volume.kubernetes.io/storage-provisioner']).toBe(
      'example.com/p',
    );
    // The external provisioner creates the PV bound to the claim (as the CSI sidecar will).
    const made = pv('pvc-uid-claim1', '1Gi', {
      cls: 'ext',
      policy: 'Delete',
      phase: 'Pending',
      claim: { name: 'claim1', uid: 'uid-claim1' },
      annotations: { 'pv.kubernetes.io/provisioned-by': 'example.com/p' },
      source: { csi: { driver: 'example.com/p', volumeHandle: 'h' } },
    });
    k.volumes.set('pvc-uid-claim1', { ...made, metadata: { ...made.metadata, resourceVersion: '7' } });
    await settle(k, [['volume', 'pvc-uid-claim1']]);
    expect(k.claim(claimKeyOf('claim1'))?.status?.phase).toBe('Bound');
    expect(k.claim(claimKeyOf('claim1'))?.spec?.volumeName).toBe('pvc-uid-claim1');
    expect(k.volume('pvc-uid-claim1')?.status?.phase).toBe('Bound');
    // Deleting the claim releases the volume and leaves deletion to the external provisioner.
    k.claims.delete(claimKeyOf('claim1'));
    await settle(k, [['claim', claimKeyOf('claim1')]]);
    expect(k.volume('pvc-uid-claim1')?.status?.phase).toBe('Released');
    expect(k.eventTuples().filter((e) => e[2] === 'VolumeFailedDelete')).toEqual([]);
  });
});
