import type { ConfigMap, PersistentVolume, PersistentVolumeClaim, Pod } from 'kubernetes-types/core/v1.js';
import { describe, expect, it } from 'vitest';
import type { EventRecorder } from '../../../client/events.js';
import { FakeClock } from '../../../client/fake-clock.test-kit.js';
import { newActualStateOfWorld } from '../cache/actual-state.js';
import { newDesiredStateOfWorld } from '../cache/desired-state.js';
import { podUid } from '../types.js';
import { newPopulator } from './populator.js';

function setup(
  o: { requiresRepublish?: boolean; configMaps?: Map<string, ConfigMap>; onClaimAsked?: () => void } = {},
) {
  const claims = new Map<string, PersistentVolumeClaim>([
    [
      'c',
      {
        metadata: { name: 'c', namespace: 'ns', uid: 'cu' },
        spec: { volumeName: 'pv' },
        status: { phase: 'Bound', capacity: { storage: '1Gi' } },
      },
    ],
  ]);
  const pv: PersistentVolume = {
    metadata: { name: 'pv' },
    spec: { capacity: { storage: '1Gi' }, claimRef: { uid: 'cu' }, csi: { driver: 'd', volumeHandle: 'h' } },
  };
  let pods: Pod[] = [
    {
      metadata: { name: 'p', namespace: 'ns', uid: 'pu' },
      spec: { containers: [], volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'c' } }] },
    },
  ];
  const events: string[] = [];
  const recorder: EventRecorder = {
    event: (_o, _t, reason, message) => void events.push(`${reason}: ${message}`),
    flush: async () => undefined,
    close: async () => undefined,
  };
  let synced = false;
  const dsw = newDesiredStateOfWorld();
  const asw = newActualStateOfWorld();
  const clock = new FakeClock();
  const populator = newPopulator({
    dsw,
    asw,
    republishMs: 60_000,
    pods: () => pods,
    lookups: {
      claim: (_ns, n) => {
        o.onClaimAsked?.();
        return claims.get(n);
      },
      volume: (n) => (n === 'pv' ? pv : undefined),
      configMap: (_ns, n) => o.configMaps?.get(n),
      secret: () => undefined,
      csiDriver: () => ({
        metadata: { name: 'd' },
        spec: { attachRequired: false, requiresRepublish: o.requiresRepublish },
      }),
    },
    recorder,
    clock,
    synced: () => synced,
  });
  return {
    claims,
    dsw,
    asw,
    populator,
    events,
    clock,
    setPods: (p: Pod[]) => (pods = p),
    sync: () => (synced = true),
    unsync: () => (synced = false),
  };
}

describe('populator', () => {
  it('adds pods, marks populated only after a synced pass, removes deleted pods', () => {
    const t = setup();
    t.populator.populate();
    expect(t.dsw.volumeNames()).toEqual(['kubernetes.io/csi/d^h']);
    expect(t.populator.hasPopulatedOnce()).toBe(false);
    t.sync();
    t.populator.populate();
    expect(t.populator.hasPopulatedOnce()).toBe(true);
    t.setPods([]);
    t.populator.populate();
    expect(t.dsw.volumeNames()).toEqual([]);
  });

  // sourcesReady, then a populated desired state: a pass whose on-demand lookups (a node's GETs) were
  // first asked during the pass has not populated anything yet, whatever was synced before it.
  it('a pass whose lookups were not answered yet does not count as populated; unresolved volumes are reported', () => {
    let answered = false;
    const unanswered: Array<() => void> = [];
    const t = setup({ onClaimAsked: () => !answered && unanswered.forEach((f) => f()) });
    unanswered.push(() => t.unsync());
    t.claims.clear();
    t.sync();
    t.populator.populate();
    expect(t.populator.hasPopulatedOnce()).toBe(false);
    expect(t.populator.wantedUnresolved(podUid('pu'), 'data')).toBe(true);
    answered = true;
    t.sync();
    t.populator.populate();
    expect(t.populator.hasPopulatedOnce()).toBe(true);
    expect(t.populator.wantedUnresolved(podUid('pu'), 'data')).toBe(true);
    t.setPods([]);
    t.populator.populate();
    expect(t.populator.wantedUnresolved(podUid('pu'), 'data')).toBe(false);
  });

  it('a live pod keeps its volume when its claim starts being deleted (never unmount a running pod)', () => {
    const t = setup();
    t.populator.populate();
    t.claims.set('c', {
      ...t.claims.get('c')!,
      metadata: { ...t.claims.get('c')!.metadata, deletionTimestamp: '2026-01-01T00:00:00Z' },
    });
    t.populator.populate();
    expect(t.dsw.podVolumeExists(podUid('pu'), t.dsw.volumeNames()[0]!)).toBe(true);
    expect(t.events).toEqual([]);
  });

  it('the same problem is reported again at the kubelet cadence (exponential backoff); a terminating pod leaves', async () => {
    const t = setup();
    t.claims.clear();
    t.populator.populate();
    t.populator.populate();
    expect(t.events).toHaveLength(1);
    const at: number[] = [];
    for (let ms = 0; ms <= 8_000; ms += 100) {
      const before = t.events.length;
      t.populator.populate();
      if (t.events.length > before) at.push(ms);
      await t.clock.advance(100);
    }
    expect(at).toEqual([500, 1_500, 3_500, 7_500]); // 0.5 s, then 1, 2, 4 s apart
    t.setPods([
      { metadata: { name: 'p', namespace: 'ns', uid: 'pu', deletionTimestamp: 'x' }, spec: { containers: [] } },
    ]);
    t.populator.populate();
    expect(t.dsw.pods()).toEqual([]);
  });

  it('requiresRepublish: a mounted volume is flagged for SetUp again once per period', async () => {
    const t = setup({ requiresRepublish: true });
    t.populator.populate();
    const [v] = t.dsw.volumesToMount();
    t.asw.markVolumeAttached(v!.volume, v!.spec, '');
    t.asw.markVolumeMounted({
      volume: v!.volume,
      pod: v!.pod,
      outerSpecName: 'data',
      spec: v!.spec,
      state: 'Mounted',
      hostPath: '/x',
    });
    t.populator.populate();
    await t.clock.advance(59_000);
    t.populator.populate();
    expect(t.asw.podVolumeStatus(v!.pod.uid, v!.volume)).toMatchObject({ remountRequired: false });
    await t.clock.advance(1_000);
    t.populator.populate();
    expect(t.asw.podVolumeStatus(v!.pod.uid, v!.volume)).toMatchObject({ remountRequired: true });
  });

  it('configMap volumes: a changed object flags the mounted volume for SetUp again; a vanished one keeps it and is reported', () => {
    const configMaps = new Map<string, ConfigMap>([['cm', { metadata: { name: 'cm' }, data: { a: '1' } }]]);
    const t = setup({ configMaps });
    t.setPods([
      {
        metadata: { name: 'p', namespace: 'ns', uid: 'pu' },
        spec: { containers: [], volumes: [{ name: 'cfg', configMap: { name: 'cm' } }] },
      },
    ]);
    t.populator.populate();
    const [v] = t.dsw.volumesToMount();
    t.asw.markVolumeAttached(v!.volume, v!.spec, '');
    t.asw.markVolumeMounted({
      volume: v!.volume,
      pod: v!.pod,
      outerSpecName: 'cfg',
      spec: v!.spec,
      state: 'Mounted',
      hostPath: '/x',
    });
    t.populator.populate();
    expect(t.asw.podVolumeStatus(v!.pod.uid, v!.volume)).toMatchObject({ remountRequired: false });
    configMaps.set('cm', { metadata: { name: 'cm' }, data: { a: '2' } });
    t.populator.populate();
    expect(t.asw.podVolumeStatus(v!.pod.uid, v!.volume)).toMatchObject({ remountRequired: true });
    configMaps.clear();
    t.populator.populate();
    expect(t.dsw.podVolumeExists(podUid('pu'), v!.volume)).toBe(true);
    expect(t.events).toEqual(['FailedMount: MountVolume.SetUp failed for volume "cfg" : configmap "cm" not found']);
  });

  it('a pod still not mounted after 2m3s gets the kubelet summary event, again after each further 2m3s', async () => {
    const t = setup();
    t.claims.clear();
    t.populator.populate();
    t.events.length = 0;
    await t.clock.advance(122_000);
    t.populator.populate();
    expect(t.events.filter((e) => e.startsWith('FailedMount: Unable'))).toEqual([]);
    await t.clock.advance(1_000);
    t.populator.populate();
    const summary =
      'FailedMount: Unable to attach or mount volumes: unmounted volumes=[data], unattached volumes=[], failed to process volumes=[data]: timed out waiting for the condition';
    expect(t.events.filter((e) => e.startsWith('FailedMount: Unable'))).toEqual([summary]);
    await t.clock.advance(123_000);
    t.populator.populate();
    expect(t.events.filter((e) => e.startsWith('FailedMount: Unable'))).toEqual([summary, summary]);
  });
});
