import { describe, expect, it } from 'vitest';
import { newVolumeIndex } from './index.js';
import { findBestMatchLinear, possibleModeKeys, accessModesKey } from './match.js';
import { NS, pv, pvc } from './fixtures.test-kit.js';
import type { Node, PersistentVolume, PersistentVolumeClaim } from './types.js';
import { seededRandom as rng } from '../../util/seeded-random.js';

const MODES = ['ReadWriteOnce', 'ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOncePod'];
const SIZES = ['500Mi', '1Gi', '1024Mi', '2Gi', '5G', '10Gi', '1.5Gi', '100Gi'];
const CLASSES = ['', 'gold', 'silver'];
const CLAIMS = ['c0', 'c1', 'c2', 'c3'];
const NODES: Node[] = ['n1', 'n2'].map((n) => ({
  metadata: { name: n, labels: { 'kubernetes.io/hostname': n, zone: n === 'n1' ? 'a' : 'b' } },
}));

function pick<T>(r: () => number, xs: readonly T[]): T {
  return xs[Math.floor(r() * xs.length)] as T;
}
function subset(r: () => number): string[] {
  return MODES.filter(() => r() < 0.4);
}

function randomVolume(r: () => number, i: number): PersistentVolume {
  const claimed = r() < 0.25;
  const v = pv(`v${i}`, pick(r, SIZES), {
    modes: subset(r),
    cls: pick(r, CLASSES),
    phase: pick(r, ['Available', 'Available', 'Available', 'Pending', 'Bound', 'Released'] as const),
    claim: claimed
      ? { name: pick(r, CLAIMS), uid: r() < 0.5 ? undefined : pick(r, ['uid-c0', 'uid-c1', 'other']) }
      : undefined,
    annotations: claimed && r() < 0.5 ? { 'pv.kubernetes.io/bound-by-controller': 'yes' } : undefined,
    labels: r() < 0.5 ? { tier: pick(r, ['a', 'b']) } : undefined,
    volumeMode: r() < 0.2 ? 'Block' : r() < 0.1 ? 'Filesystem' : undefined,
    source:
      r() < 0.3
        ? {
            hostPath: { path: '/x' },
            nodeAffinity: {
              required: {
                nodeSelectorTerms: [
                  { matchExpressions: [{ key: 'zone', operator: 'In', values: [pick(r, ['a', 'b'])] }] },
                ],
              },
            },
          }
        : undefined,
  });
  if (r() < 0.05 && v.metadata) return { ...v, metadata: { ...v.metadata, deletionTimestamp: '2024-01-01T00:00:00Z' } };
  return v;
}

function randomClaim(r: () => number): PersistentVolumeClaim {
  return pvc(pick(r, CLAIMS), pick(r, SIZES), {
    modes: subset(r),
    cls: pick(r, CLASSES),
    selector:
      r() < 0.3
        ? r() < 0.5
          ? { matchLabels: { tier: pick(r, ['a', 'b']) } }
          : { matchExpressions: [{ key: 'tier', operator: 'Exists' }] }
        : undefined,
    volumeMode: r() < 0.2 ? 'Block' : undefined,
  });
}

describe('volume index', () => {
  it('orders mode sets fewest first and keeps only supersets', () => {
    const keys = ['RWO,ROX,RWX', 'RWO', 'ROX', 'RWO,ROX', ''];
    expect(possibleModeKeys(keys, ['ReadWriteOnce'])).toEqual(['RWO', 'RWO,ROX', 'RWO,ROX,RWX']);
    expect(possibleModeKeys(keys, [])).toEqual(['', 'ROX', 'RWO', 'RWO,ROX', 'RWO,ROX,RWX']);
    expect(accessModesKey(['ReadWriteMany', 'ReadWriteOnce', 'ReadWriteOnce', 'Bogus'])).toBe('RWO,RWX');
  });

  it('add/update/delete keep it current', () => {
    const idx = newVolumeIndex();
    const claim = pvc('c0', '1Gi');
    idx.upsert(pv('a', '5Gi'));
    idx.upsert(pv('b', '2Gi'));
    expect(idx.findBestMatch(claim, { delayBinding: false })?.metadata?.name).toBe('b');
    idx.upsert(pv('b', '2Gi', { claim: { name: 'other', uid: 'x' }, phase: 'Bound' }));
    expect(idx.findBestMatch(claim, { delayBinding: false })?.metadata?.name).toBe('a');
    idx.remove('a');
    expect(idx.findBestMatch(claim, { delayBinding: false })).toBeNull();
    expect(idx.size).toBe(1);
    idx.remove('b');
    idx.remove('b');
    expect(idx.size).toBe(0);
  });

  it('equal capacities written differently compare equal; ties go to the smaller name', () => {
    const idx = newVolumeIndex();
    idx.upsert(pv('z', '1Gi'));
    idx.upsert(pv('m', '1024Mi'));
    expect(idx.findBestMatch(pvc('c0', '1Gi'), { delayBinding: false })?.metadata?.name).toBe('m');
  });

  it('is equivalent to the linear reference matcher (randomized, fixed seed)', () => {
    const r = rng(20240601);
    const idx = newVolumeIndex();
    const live = new Map<string, PersistentVolume>();
    let next = 0;
    let compared = 0;
    let nonNull = 0;
    for (let step = 0; step < 3000; step++) {
      const roll = r();
      if (roll < 0.55 || live.size === 0) {
        const v = randomVolume(r, next++);
        live.set(v.metadata?.name ?? '', v);
        idx.upsert(v);
      } else if (roll < 0.8) {
        const name = pick(r, [...live.keys()]);
        const v = randomVolume(r, 0);
        const renamed = { ...v, metadata: { ...v.metadata, name } };
        live.set(name, renamed);
        idx.upsert(renamed);
      } else {
        const name = pick(r, [...live.keys()]);
        live.delete(name);
        idx.remove(name);
      }
      if (step % 3 === 0) {
        const all = [...live.values()];
        for (let q = 0; q < 4; q++) {
          const claim = randomClaim(r);
          const o = { delayBinding: r() < 0.2, ...(r() < 0.2 ? { node: pick(r, NODES) } : {}) };
          const want = findBestMatchLinear(claim, all, o)?.metadata?.name ?? null;
          const got = idx.findBestMatch(claim, o)?.metadata?.name ?? null;
          if (got !== want)
            throw new Error(
              `step ${step}: claim ${JSON.stringify(claim.spec)} opts ${JSON.stringify(o)}: index ${got}, linear ${want}`,
            );
          compared++;
          if (want !== null) nonNull++;
        }
      }
    }
    expect(idx.size).toBe(live.size);
    expect(compared).toBe(4000);
    // The generator must exercise real matches, not only misses.
    expect(nonNull).toBeGreaterThan(800);
  });

  it('pre-bound volumes are found regardless of phase and class, per mode set', () => {
    const idx = newVolumeIndex();
    idx.upsert(pv('pre', '10Gi', { claim: { name: 'c0' }, phase: 'Pending', cls: 'x' }));
    idx.upsert(pv('free', '1Gi'));
    expect(idx.findBestMatch(pvc('c0', '1Gi'), { delayBinding: false })?.metadata?.name).toBe('pre');
    // delayed binding: pre-bound still returned, unbound skipped
    expect(idx.findBestMatch(pvc('c0', '1Gi'), { delayBinding: true })?.metadata?.name).toBe('pre');
    expect(
      idx.findBestMatch({ ...pvc('c1', '1Gi'), metadata: { name: 'c1', namespace: NS } }, { delayBinding: true }),
    ).toBeNull();
  });

  const BY_CONTROLLER = { 'pv.kubernetes.io/bound-by-controller': 'yes' };
  it.each([
    [
      'pre-bound with the UID, Pending, over a smaller Available one',
      [pv('pre', '2Gi', { phase: 'Pending', claim: { name: 'c0', uid: 'uid-c0' } }), pv('free', '1Gi')],
      'pre',
    ],
    [
      'pre-bound by name, Available, another class',
      [pv('free', '1Gi'), pv('pre', '1Gi', { cls: 'x', claim: { name: 'c0' } })],
      'pre',
    ],
    [
      "the user's pre-binding over the controller's half-done one",
      [
        pv('a-ours', '1Gi', { phase: 'Bound', claim: { name: 'c0', uid: 'uid-c0' }, annotations: BY_CONTROLLER }),
        pv('z-user', '1Gi', { phase: 'Pending', claim: { name: 'c0', uid: 'uid-c0' } }),
      ],
      'z-user',
    ],
    [
      'two pre-bound by the user: the smaller name',
      [pv('b', '1Gi', { claim: { name: 'c0' } }), pv('a', '5Gi', { claim: { name: 'c0' } })],
      'a',
    ],
    ['pre-bound but too small', [pv('pre', '500Mi', { claim: { name: 'c0' } }), pv('free', '1Gi')], 'free'],
    [
      'pre-bound but being deleted',
      [
        {
          ...pv('pre', '1Gi', { claim: { name: 'c0' } }),
          metadata: { name: 'pre', deletionTimestamp: '2024-01-01T00:00:00Z' },
        },
        pv('free', '1Gi'),
      ],
      'free',
    ],
    [
      'pre-bound to an earlier claim of that name',
      [pv('pre', '1Gi', { claim: { name: 'c0', uid: 'old' } }), pv('free', '1Gi')],
      'free',
    ],
    [
      'pre-bound in a larger mode set: the smaller set is searched first (upstream)',
      [pv('pre', '1Gi', { modes: ['ReadWriteOnce', 'ReadWriteMany'], claim: { name: 'c0' } }), pv('free', '1Gi')],
      'free',
    ],
  ] as const)('pre-bound volumes: %s → %s (index and reference agree)', (_n, volumes, want) => {
    const idx = newVolumeIndex();
    for (const v of volumes) idx.upsert(v);
    const claim = pvc('c0', '1Gi');
    expect(idx.findBestMatch(claim, { delayBinding: false })?.metadata?.name).toBe(want);
    expect(findBestMatchLinear(claim, volumes, { delayBinding: false })?.metadata?.name).toBe(want);
  });

  it('a reserved volume is skipped by other claims, not by its holder, and released after', () => {
    const idx = newVolumeIndex();
    idx.upsert(pv('small', '1Gi'));
    idx.upsert(pv('big', '2Gi'));
    idx.reserve('small', `${NS}/c0`);
    idx.upsert(pv('small', '1Gi')); // an update keeps the hold
    expect(idx.findBestMatch(pvc('c1', '1Gi'), { delayBinding: false })?.metadata?.name).toBe('big');
    expect(idx.findBestMatch(pvc('c0', '1Gi'), { delayBinding: false })?.metadata?.name).toBe('small');
    idx.release('small', `${NS}/c1`); // not the holder: no effect
    expect(idx.findBestMatch(pvc('c1', '1Gi'), { delayBinding: false })?.metadata?.name).toBe('big');
    idx.release('small', `${NS}/c0`);
    expect(idx.findBestMatch(pvc('c1', '1Gi'), { delayBinding: false })?.metadata?.name).toBe('small');
  });
});
