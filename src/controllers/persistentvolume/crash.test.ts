import { describe, expect, it } from 'vitest';
import { syncClaim } from './sync-claim.js';
import { syncVolume } from './sync-volume.js';
import { Kit, NS, pv, pvc } from './fixtures.test-kit.js';
import { DEFAULT_OPTIONS } from './types.js';
import { UnavailableError } from '../../util/errors.js';

/** Drive both loops until nothing changes, as the informers and resync would. */
async function converge(k: Kit): Promise<void> {
  for (let round = 0; round < 5; round++) {
    const before = k.writes.length;
    for (const key of [...k.claims.keys()]) {
      const c = k.ctx.cache.getClaim(key);
      if (c) await syncClaim(k.ctx, c);
    }
    for (const name of [...k.volumes.keys()]) {
      const v = k.ctx.cache.volumes.get(name);
      if (v) await syncVolume(k.ctx, v);
    }
    if (k.writes.length === before) return;
  }
  throw new Error('did not converge');
}

describe('bind survives a crash between any two writes', () => {
  it.each([0, 1, 2, 3])('crash after %i writes, restart, resume: bound once, no extra PV writes', async (n) => {
    const k = new Kit({ volumes: [pv('v1', '1Gi'), pv('v2', '1Gi')], claims: [pvc('claim1', '1Gi')] });
    k.crashAfter(n);
    await expect(syncClaim(k.ctx, k.ctx.cache.getClaim(`${NS}/claim1`) ?? pvc('x', '1Gi'))).rejects.toBeInstanceOf(
      UnavailableError,
    );
    expect(k.writes).toHaveLength(n);
    k.restart(); // new process: cache rebuilt from the API server
    await converge(k);
    const claim = k.claim(`${NS}/claim1`);
    expect(claim?.status?.phase).toBe('Bound');
    expect(claim?.spec?.volumeName).toBe('v1');
    expect(claim?.metadata?.annotations).toEqual({
      'pv.kubernetes.io/bind-completed': 'yes',
      'pv.kubernetes.io/bound-by-controller': 'yes',
    });
    expect(k.volume('v1')?.status?.phase).toBe('Bound');
    expect(k.volume('v1')?.spec?.claimRef?.uid).toBe('uid-claim1');
    // The other volume was never touched beyond becoming/staying Available.
    expect(k.volume('v2')?.spec?.claimRef).toBeUndefined();
    // Each of the four bind writes happened exactly once in total.
    const bindWrites = k.writes
      .filter((w) => w.name === 'v1' || w.name === `${NS}/claim1`)
      .map((w) => `${w.op}:${w.name}`);
    expect(bindWrites.sort()).toEqual(
      [`updateClaim:${NS}/claim1`, `updateClaimStatus:${NS}/claim1`, 'updateVolume:v1', 'updateVolumeStatus:v1'].sort(),
    );
  });

  it('two claims, one volume, crash mid-bind: exactly one claim ends up Bound', async () => {
    for (let n = 0; n <= 3; n++) {
      const k = new Kit({ volumes: [pv('v1', '1Gi')], claims: [pvc('a', '1Gi'), pvc('b', '1Gi')] });
      k.crashAfter(n);
      await syncClaim(k.ctx, k.ctx.cache.getClaim(`${NS}/a`) ?? pvc('x', '1Gi')).catch(() => undefined);
      k.restart();
      await converge(k);
      const phases = [k.claim(`${NS}/a`)?.status?.phase, k.claim(`${NS}/b`)?.status?.phase];
      expect(phases.filter((p) => p === 'Bound')).toHaveLength(1);
      const winner = k.claim(`${NS}/a`)?.status?.phase === 'Bound' ? 'a' : 'b';
      expect(k.volume('v1')?.spec?.claimRef?.name).toBe(winner);
      expect(k.claim(`${NS}/${winner === 'a' ? 'b' : 'a'}`)?.spec?.volumeName).toBeUndefined();
    }
  });

  it('a stale cache copy cannot double-bind: the API refuses the write on resourceVersion', async () => {
    const k = new Kit({ volumes: [pv('v1', '1Gi')], claims: [pvc('a', '1Gi'), pvc('b', '1Gi')] });
    const staleVolume = k.ctx.cache.volumes.get('v1');
    await syncClaim(k.ctx, k.ctx.cache.getClaim(`${NS}/a`) ?? pvc('x', '1Gi'));
    // Another controller instance still holding the old copy of v1 tries to bind b to it.
    if (staleVolume) k.ctx.cache.volumes.upsert(staleVolume);
    await expect(syncClaim(k.ctx, k.ctx.cache.getClaim(`${NS}/b`) ?? pvc('x', '1Gi'))).rejects.toThrow(/modified/);
    expect(k.volume('v1')?.spec?.claimRef?.name).toBe('a');
  });

  it('concurrent workers pick different volumes (reservation), no conflicts', async () => {
    const k = new Kit({
      volumes: [pv('v1', '1Gi'), pv('v2', '1Gi'), pv('v3', '1Gi')],
      claims: [pvc('a', '1Gi'), pvc('b', '1Gi'), pvc('c', '1Gi')],
    });
    const claims = ['a', 'b', 'c'].map((n) => k.ctx.cache.getClaim(`${NS}/${n}`) ?? pvc('x', '1Gi'));
    await Promise.all(claims.map((c) => syncClaim(k.ctx, c)));
    const names = ['a', 'b', 'c'].map((n) => k.claim(`${NS}/${n}`)?.spec?.volumeName);
    expect(new Set(names)).toEqual(new Set(['v1', 'v2', 'v3']));
    expect(k.writes).toHaveLength(12);
  });

  it('a claim that found nothing is requeued shortly after a volume of its class becomes Available', async () => {
    const k = new Kit({
      claims: [pvc('claim1', '1Gi')],
      volumes: [pv('v1', '1Gi', { phase: 'Pending' }), pv('g1', '1Gi', { phase: 'Pending', cls: 'gold' })],
    });
    await syncClaim(k.ctx, k.ctx.cache.getClaim(`${NS}/claim1`) ?? pvc('x', '1Gi'));
    expect(k.enqueued).toEqual([]);
    await syncVolume(k.ctx, k.ctx.cache.volumes.get('g1') ?? pv('x', '1Gi'));
    expect(k.enqueued).toEqual([]); // another class
    await syncVolume(k.ctx, k.ctx.cache.volumes.get('v1') ?? pv('x', '1Gi'));
    expect(k.enqueued).toEqual([`${NS}/claim1`]);
    expect(k.enqueuedAfterMs.get(`${NS}/claim1`)).toBe(DEFAULT_OPTIONS.waitingClaimWakeDelayMs);
    await syncClaim(k.ctx, k.ctx.cache.getClaim(`${NS}/claim1`) ?? pvc('x', '1Gi'));
    expect(k.claim(`${NS}/claim1`)?.spec?.volumeName).toBe('v1');
  });
});
