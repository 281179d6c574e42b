import { describe, expect, it } from 'vitest';
import { newActualStateOfWorld, type ActualStateOfWorld } from '../cache/actual-state.js';
import { newDesiredStateOfWorld, type DesiredStateOfWorld } from '../cache/desired-state.js';
import { csiSpec, pod, vol, want } from '../fixtures.test-kit.js';
import { reconcile } from './reconcile.js';

type Setup = (d: DesiredStateOfWorld, a: ActualStateOfWorld) => void;
const attached =
  (h: string, device: 'Mounted' | 'Uncertain' | 'Unmounted' = 'Mounted'): Setup =>
  (_d, a) => {
    a.markVolumeAttached(vol(h), csiSpec(h), '');
    if (device !== 'Unmounted') a.markDeviceMounted(vol(h), csiSpec(h), `/g/${h}`, device);
  };
const mounted =
  (p: string, h: string, state: 'Mounted' | 'Uncertain' = 'Mounted'): Setup =>
  (_d, a) =>
    a.markVolumeMounted({
      volume: vol(h),
      pod: pod(p),
      outerSpecName: 'data',
      spec: csiSpec(h),
      state,
      hostPath: '/p',
    });
const wants =
  (p: string, h: string, o: Parameters<typeof want>[2] = {}): Setup =>
  (d) =>
    d.addPodToVolume(want(p, h, o));

const cases: Array<{
  name: string;
  setup: Setup[];
  populated?: boolean;
  unresolved?: string[];
  want: string[];
}> = [
  { name: 'new pod → verify attached', setup: [wants('a', 'h')], want: ['verifyAttached h'] },
  {
    name: 'attachable not yet reported in use → wait',
    setup: [wants('a', 'h', { pluginIsAttachable: true })],
    want: [],
  },
  { name: 'attached → mount device', setup: [wants('a', 'h'), attached('h', 'Unmounted')], want: ['mountDevice h'] },
  {
    name: 'two pods, one device mount',
    setup: [wants('a', 'h'), wants('b', 'h'), attached('h', 'Unmounted')],
    want: ['mountDevice h'],
  },
  {
    name: 'device mounted → set up each pod',
    setup: [wants('a', 'h'), wants('b', 'h'), attached('h')],
    want: ['setUp h uid-a', 'setUp h uid-b'],
  },
  {
    name: 'device uncertain → mount device again',
    setup: [wants('a', 'h'), attached('h', 'Uncertain'), mounted('a', 'h')],
    want: ['mountDevice h'],
  },
  {
    name: 'pod mount uncertain → set up again',
    setup: [wants('a', 'h'), attached('h'), mounted('a', 'h', 'Uncertain')],
    want: ['setUp h uid-a remount'],
  },
  { name: 'all mounted → nothing', setup: [wants('a', 'h'), attached('h'), mounted('a', 'h')], want: [] },
  { name: 'pod gone → unmount volume', setup: [attached('h'), mounted('a', 'h')], want: ['unmountVolume h uid-a'] },
  {
    name: 'pod gone before first pass → nothing torn down',
    setup: [attached('h'), mounted('a', 'h')],
    populated: false,
    want: [],
  },
  {
    name: 'live pod whose volume did not resolve yet → adopted, nothing torn down',
    setup: [attached('h'), mounted('a', 'h')],
    unresolved: ['uid-a/data'],
    want: [],
  },
  {
    name: 'another pod unresolved → this one unmounted',
    setup: [attached('h'), mounted('a', 'h')],
    unresolved: ['uid-b/data'],
    want: ['unmountVolume h uid-a'],
  },
  { name: 'no pods, not desired → unmount device', setup: [attached('h')], want: ['unmountDevice h'] },
  {
    name: 'device still wanted → kept',
    setup: [wants('b', 'h'), attached('h'), mounted('a', 'h')],
    want: ['unmountVolume h uid-a', 'setUp h uid-b'],
  },
  { name: 'device unmounted, not desired → forget', setup: [attached('h', 'Unmounted')], want: ['markDetached h'] },
  {
    name: 'order: unmounts, mounts, device unmounts',
    setup: [wants('b', 'h2'), attached('h1'), mounted('a', 'h1'), attached('h3'), attached('h2', 'Unmounted')],
    want: ['unmountVolume h1 uid-a', 'mountDevice h2', 'unmountDevice h3'],
  },
  {
    name: 'resize required → expand',
    setup: [
      wants('a', 'h'),
      attached('h'),
      mounted('a', 'h'),
      (_d, a) => a.markResizeRequired(pod('a').uid, vol('h'), true),
    ],
    want: ['expand h uid-a'],
  },
  {
    name: 'emptyDir needs no device mount',
    setup: [
      wants('a', 'e', { spec: { ...csiSpec('e'), plugin: 'kubernetes.io/empty-dir', csi: undefined } }),
      (_d, a) => a.markVolumeAttached(vol('e'), csiSpec('e'), ''),
    ],
    want: ['setUp e uid-a'],
  },
];

describe('reconcile', () => {
  it.each(cases)('$name', ({ setup, populated, unresolved, want: expected }) => {
    const d = newDesiredStateOfWorld();
    const a = newActualStateOfWorld();
    for (const s of setup) s(d, a);
    const wanted = new Set(unresolved ?? []);
    const ops = reconcile(d, a, populated ?? true, (p, outer) => wanted.has(`${p}/${outer}`)).map((o) => {
      const h = o.volume.split('^')[1];
      switch (o.kind) {
        case 'setUp':
          return `setUp ${h} ${o.pod}${o.remount ? ' remount' : ''}`;
        case 'unmountVolume':
        case 'expand':
          return `${o.kind} ${h} ${o.pod}`;
        default:
          return `${o.kind} ${h}`;
      }
    });
    expect(ops).toEqual(expected);
  });
});
