import { describe, expect, it } from 'vitest';
import { newPvControllerCache } from './cache.js';
import { pv, pvc } from './fixtures.test-kit.js';
import { claimKey } from './types.js';

describe('PV controller cache: waiting claims', () => {
  it('wakes one waiting claim per new volume, the longest-waiting one the volume could satisfy', () => {
    const c = newPvControllerCache();
    const claims = [
      pvc('big', '10Gi', { cls: 'gold' }),
      pvc('rwx', '1Gi', { cls: 'gold', modes: ['ReadWriteMany'] }),
      pvc('labelled', '1Gi', { cls: 'gold', selector: { matchLabels: { tier: 'db' } } }),
      pvc('small-1', '1Gi', { cls: 'gold' }),
      pvc('small-2', '1Gi', { cls: 'gold' }),
      pvc('silver', '1Gi', { cls: 'silver' }),
    ];
    for (const cl of claims) {
      c.storeClaim({ ...cl, metadata: { ...cl.metadata, resourceVersion: '1' } });
      c.markWaiting(claimKey(cl), cl.spec?.storageClassName ?? '');
    }
    const vol = (name: string, size: string, o: Parameters<typeof pv>[2] = {}) => pv(name, size, { cls: 'gold', ...o });
    expect(c.takeWaitingFor(vol('v1', '2Gi'))).toBe('ns/small-1');
    expect(c.takeWaitingFor(vol('v2', '2Gi', { labels: { tier: 'db' } }))).toBe('ns/labelled');
    expect(c.takeWaitingFor(vol('v3', '2Gi'))).toBe('ns/small-2');
    // Nothing left that a 2Gi RWO gold volume could take: the big and the RWX claims keep waiting.
    expect(c.takeWaitingFor(vol('v4', '2Gi'))).toBeUndefined();
    expect(c.takeWaitingFor(vol('v5', '10Gi', { modes: ['ReadWriteOnce', 'ReadWriteMany'] }))).toBe('ns/big');
    expect(c.takeWaitingFor(vol('v6', '10Gi', { modes: ['ReadWriteMany'] }))).toBe('ns/rwx');
    expect(c.takeWaitingFor(pv('s1', '1Gi', { cls: 'silver' }))).toBe('ns/silver');
    expect(c.takeWaitingFor(pv('s2', '1Gi', { cls: 'silver' }))).toBeUndefined();
  });

  it('drops waiting claims that were deleted or bound meanwhile instead of waking them', () => {
    const c = newPvControllerCache();
    const gone = pvc('gone', '1Gi', { cls: 'gold' });
    const bound = pvc('bound', '1Gi', { cls: 'gold' });
    const waiting = pvc('waiting', '1Gi', { cls: 'gold' });
    for (const cl of [gone, bound, waiting]) {
      c.storeClaim({ ...cl, metadata: { ...cl.metadata, resourceVersion: '1' } });
      c.markWaiting(claimKey(cl), 'gold');
    }
    c.deleteClaim(claimKey(gone));
    c.storeClaim({
      ...bound,
      metadata: { ...bound.metadata, resourceVersion: '2' },
      spec: { ...bound.spec, volumeName: 'elsewhere' },
    });
    expect(c.takeWaitingFor(pv('v', '1Gi', { cls: 'gold' }))).toBe('ns/waiting');
    expect(c.takeWaitingFor(pv('w', '1Gi', { cls: 'gold' }))).toBeUndefined();
  });
});
