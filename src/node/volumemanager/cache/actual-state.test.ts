import { describe, expect, it } from 'vitest';
import { newActualStateOfWorld } from './actual-state.js';
import { csiSpec, pod, vol } from '../testing/fixtures.js';

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
    a.markDeviceMounted(vol('h1'), '/g', 'Mounted');
    a.markVolumeMounted(mounted('a', 'h1'));
    expect(a.podVolumeStatus(pod('a').uid, vol('h1'))).toMatchObject({ kind: 'mounted', state: 'Mounted', deviceState: 'Mounted' });
    expect(a.unmountedDevices()).toEqual([]);
    expect(a.markVolumeDetached(vol('h1'))).toBe(false);
    a.markVolumeUnmounted(pod('a').uid, vol('h1'));
    expect(a.unmountedDevices().map((v) => v.volume)).toEqual([vol('h1')]);
    expect(a.markVolumeDetached(vol('h1'))).toBe(false);
    a.markDeviceUnmounted(vol('h1'));
    expect(a.markVolumeDetached(vol('h1'))).toBe(true);
    expect(a.attachedVolumes()).toEqual([]);
  });

  it.each([
    { name: 'device mount before attach', act: (a: ReturnType<typeof newActualStateOfWorld>) => a.markDeviceMounted(vol('h'), '/g', 'Mounted') },
    { name: 'pod mount before attach', act: (a: ReturnType<typeof newActualStateOfWorld>) => a.markVolumeMounted(mounted('a', 'h')) },
  ])('refuses $name', ({ act }) => {
    expect(() => act(newActualStateOfWorld())).toThrow(/not attached/);
  });

  it('remount and resize flags are set per pod and cleared by a new mount', () => {
    const a = newActualStateOfWorld();
    a.markVolumeAttached(vol('h1'), csiSpec('h1'), '');
    a.markVolumeMounted(mounted('a', 'h1', 'Uncertain'));
    a.markVolumeMounted(mounted('b', 'h1'));
    a.markRemountRequired(pod('a').uid);
    a.markResizeRequired(pod('b').uid, vol('h1'), true);
    expect(a.podVolumeStatus(pod('a').uid, vol('h1'))).toMatchObject({ state: 'Uncertain', remountRequired: true, resizeRequired: false });
    expect(a.podVolumeStatus(pod('b').uid, vol('h1'))).toMatchObject({ remountRequired: false, resizeRequired: true });
    a.markVolumeMounted(mounted('a', 'h1'));
    expect(a.podVolumeStatus(pod('a').uid, vol('h1'))).toMatchObject({ state: 'Mounted', remountRequired: false });
    expect(a.mountedVolumesForPod(pod('b').uid)).toHaveLength(1);
  });
});
