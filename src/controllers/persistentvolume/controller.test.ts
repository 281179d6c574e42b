import { describe, expect, it } from 'vitest';
import { handleClaimKey, handleVolumeKey, resync, type Requeue } from './controller.js';
import { Kit, NS, pv, pvc } from './fixtures.test-kit.js';

function queue(): Requeue & { volumes: string[]; claims: string[] } {
  const q = {
    volumes: [] as string[],
    claims: [] as string[],
    volume: (n: string) => q.volumes.push(n),
    claim: (k: string) => q.claims.push(k),
  };
  return q;
}

const withRv = <T extends { metadata?: object }>(o: T, rv: string): T => ({
  ...o,
  metadata: { ...o.metadata, resourceVersion: rv },
});

describe('controller entry points', () => {
  it('a claim event binds it; an older informer copy afterwards is ignored', async () => {
    const k = new Kit({ volumes: [pv('v1', '1Gi')], claims: [pvc('claim1', '1Gi')] });
    const q = queue();
    const informer = k.claim(`${NS}/claim1`);
    await handleClaimKey(k.ctx, q, `${NS}/claim1`, informer);
    expect(k.claim(`${NS}/claim1`)?.status?.phase).toBe('Bound');
    const writes = k.writes.length;
    // The informer now delivers the pre-bind version (older resourceVersion): no sync, no writes.
    await handleClaimKey(k.ctx, q, `${NS}/claim1`, informer);
    expect(k.writes.length).toBe(writes);
    expect(k.ctx.cache.getClaim(`${NS}/claim1`)?.spec?.volumeName).toBe('v1');
  });

  it('a deleted claim leaves the cache and enqueues its volume', async () => {
    const k = new Kit({ claims: [pvc('claim1', '1Gi', { volumeName: 'v1' })] });
    const q = queue();
    await handleClaimKey(k.ctx, q, `${NS}/claim1`, undefined);
    expect(k.ctx.cache.getClaim(`${NS}/claim1`)).toBeUndefined();
    expect(q.volumes).toEqual(['v1']);
  });

  it('a deleted volume leaves the cache and index, and enqueues its claim', async () => {
    const k = new Kit({ volumes: [pv('v1', '1Gi', { claim: { name: 'claim1', uid: 'u' }, phase: 'Bound' })] });
    const q = queue();
    await handleVolumeKey(k.ctx, q, 'v1', undefined);
    expect(k.ctx.cache.volumes.get('v1')).toBeUndefined();
    expect(q.claims).toEqual([`${NS}/claim1`]);
  });

  it('a volume event syncs it; an equal resourceVersion passes (resync)', async () => {
    const k = new Kit({ volumes: [pv('v1', '1Gi', { phase: 'Pending' })] });
    const q = queue();
    await handleVolumeKey(k.ctx, q, 'v1', k.volume('v1'));
    expect(k.volume('v1')?.status?.phase).toBe('Available');
    const stale = withRv(pv('v1', '1Gi', { phase: 'Pending' }), '1');
    await handleVolumeKey(k.ctx, q, 'v1', stale);
    expect(k.ctx.cache.volumes.get('v1')?.status?.phase).toBe('Available');
  });

  it('resync enqueues every claim and volume', () => {
    const q = queue();
    resync(q, [pvc('a', '1Gi'), pvc('b', '1Gi')], [pv('v1', '1Gi')]);
    expect(q.claims).toEqual([`${NS}/a`, `${NS}/b`]);
    expect(q.volumes).toEqual(['v1']);
  });
});
