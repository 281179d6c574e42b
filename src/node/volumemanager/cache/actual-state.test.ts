import { describe, expect, it } from 'vitest';
import { newActualStateOfWorld } from './actual-state.js';
import { csiSpec, pod, vol } from '../fixtures.test-kit.js';

const mounted = (p: string, h: string, state: 'Mounted' | 'Uncertain' = 'Mounted') => ({
  volume: vol(h),
  pod: pod(p),
  outerSpecName: 'data',
  spec: csiSpec(h),
  state,
  hostPath: `/x/${p}`,
});

describe('ActualStateOfWorld', () => {
  it('walks attached → device mounted → pod mounted → back', () => {
    const a = newActualStateOfWorld();
    expect(a.podVolumeStatus(pod('a').uid, vol('h1'))).toEqual({ kind: 'notAttached' });
    a.markVolumeAttached(vol('h1'), csiSpec('h1'), '');
    expect(a.podVolumeStatus(pod('a').uid, vol('h1'))).toEqual({ kind: 'attached', deviceState: 'Unmounted' });
    a.markDeviceMounted(vol('h1'), csiSpec('h1'), '/g', 'Mounted');
    a.markVolumeMounted(mounted('a', 'h1'));
    expect(a.podVolumeStatus(pod('a').uid, vol('h1'))).toMatchObject({
      kind: 'mounted',
      state: 'Mounted',
      deviceState: 'Mounted',
    });
    expect(a.unmountedDevices()).toEqual([]);
    expect(a.markVolumeDetached(vol('h1'))).toBe(false);
    a.markVolumeUnmounted(pod('a').uid, vol('h1'));
    expect(a.unmountedDevices().map((v) => v.volume)).toEqual([vol('h1')]);
    expect(a.markVolumeDetached(vol('h1'))).toBe(false);
    a.markDeviceUnmounted(vol('h1'));
    expect(a.markVolumeDetached(vol('h1'))).toBe(true);
    expect(a.attachedVolumes()).toEqual([]);
  });

  // A mount that happened is recorded whatever the attach state says (the volume's pod may have gone
  // while NodeStage ran): device Uncertain, so that the reconciler unstages it when nothing wants it.
  it('records a device mount of a volume not attached, device Uncertain', () => {
    const a = newActualStateOfWorld();
    a.markDeviceMounted(vol('h'), csiSpec('h'), '/g', 'Mounted');
    expect(a.attachedVolume(vol('h'))).toMatchObject({ deviceState: 'Uncertain', deviceMountPath: '/g' });
    expect(a.unmountedDevices().map((v) => v.volume)).toEqual([vol('h')]);
    expect(a.markVolumeDetached(vol('h'))).toBe(false);
  });

  it('records a pod mount of a volume not attached, device Uncertain', () => {
    const a = newActualStateOfWorld();
    a.markVolumeMounted(mounted('a', 'h'));
    expect(a.podVolumeStatus(pod('a').uid, vol('h'))).toMatchObject({
      kind: 'mounted',
      state: 'Mounted',
      deviceState: 'Uncertain',
    });
    expect(a.mountedPods().map((m) => m.pod.uid)).toEqual([pod('a').uid]);
  });

  it('remount and resize flags are set per pod and cleared by a new mount', () => {
    const a = newActualStateOfWorld();
    a.markVolumeAttached(vol('h1'), csiSpec('h1'), '');
    a.markVolumeMounted(mounted('a', 'h1', 'Uncertain'));
    a.markVolumeMounted(mounted('b', 'h1'));
    a.markRemountRequired(pod('a').uid);
    a.markResizeRequired(pod('b').uid, vol('h1'), true);
    expect(a.podVolumeStatus(pod('a').uid, vol('h1'))).toMatchObject({
      state: 'Uncertain',
      remountRequired: true,
      resizeRequired: false,
    });
    expect(a.podVolumeStatus(pod('b').uid, vol('h1'))).toMatchObject({ remountRequired: false, resizeRequired: true });
    a.markVolumeMounted(mounted('a', 'h1'));
    expect(a.podVolumeStatus(pod('a').uid, vol('h1'))).toMatchObject({ state: 'Mounted', remountRequired: false });
    expect(a.mountedVolumesForPod(pod('b').uid)).toHaveLength(1);
  });

  it('lists each pod its own mounted volumes, following mounts, unmounts and a remount of all of them', () => {
    const a = newActualStateOfWorld();
    for (const h of ['h1', 'h2', 'h3']) a.markVolumeAttached(vol(h), csiSpec(h), '');
    a.markVolumeMounted(mounted('a', 'h1'));
    a.markVolumeMounted(mounted('a', 'h2'));
    a.markVolumeMounted(mounted('b', 'h2'));
    a.markVolumeMounted(mounted('b', 'h3'));
    const names = (p: string): string[] =>
      a
        .mountedVolumesForPod(pod(p).uid)
        .map((m) => m.volume)
        .sort();
    expect(names('a')).toEqual([vol('h1'), vol('h2')]);
    expect(names('b')).toEqual([vol('h2'), vol('h3')]);
    expect(names('c')).toEqual([]);
    a.markRemountRequired(pod('b').uid);
    expect(a.mountedVolumesForPod(pod('b').uid).every((m) => m.remountRequired)).toBe(true);
    expect(a.mountedVolumesForPod(pod('a').uid).some((m) => m.remountRequired)).toBe(false);
    a.markVolumeUnmounted(pod('a').uid, vol('h2'));
    a.markVolumeUnmounted(pod('a').uid, vol('h1'));
    expect(names('a')).toEqual([]);
    a.markVolumeMounted(mounted('a', 'h3'));
    expect(names('a')).toEqual([vol('h3')]);
  });
});
