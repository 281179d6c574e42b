import { describe, expect, it } from 'vitest';
import { newDesiredStateOfWorld } from './desired-state.js';
import { pod, vol, want } from '../fixtures.test-kit.js';

describe('DesiredStateOfWorld', () => {
  it('adds pods to volumes idempotently and keeps reportedInUse', () => {
    const d = newDesiredStateOfWorld();
    d.addPodToVolume(want('a', 'h1'));
    d.markVolumesReportedInUse([vol('h1')]);
    d.addPodToVolume(want('a', 'h1', { outerSpecName: 'renamed' }));
    d.addPodToVolume(want('b', 'h1'));
    const all = d.volumesToMount();
    expect(all).toHaveLength(2);
    expect(all.every((v) => v.reportedInUse)).toBe(true);
    expect(all.find((v) => v.pod.name === 'a')?.outerSpecName).toBe('renamed');
    expect(d.volumeNames()).toEqual([vol('h1')]);
    // Pairs handed out are snapshots: a later change stores new objects.
    d.markVolumesReportedInUse([]);
    expect(all.every((v) => v.reportedInUse)).toBe(true);
    expect(d.volumesToMount().some((v) => v.reportedInUse)).toBe(false);
    d.addPodToVolume(want('c', 'h1'));
    expect(d.volumesForPod(pod('c').uid)[0]?.reportedInUse).toBe(false);
  });

  it.each([
    { name: 'last pod leaves → volume leaves', remove: ['a', 'b'], volumeLeft: false },
    { name: 'one pod leaves → volume stays', remove: ['a'], volumeLeft: true },
    { name: 'absent pod → no-op', remove: ['zzz'], volumeLeft: true },
  ])('$name', ({ remove, volumeLeft }) => {
    const d = newDesiredStateOfWorld();
    d.addPodToVolume(want('a', 'h1'));
    d.addPodToVolume(want('b', 'h1'));
    for (const p of remove) d.deletePod(pod(p).uid);
    expect(d.volumeExists(vol('h1'))).toBe(volumeLeft);
    for (const p of remove) expect(d.podExists(pod(p).uid)).toBe(false);
  });

  it('returns fresh arrays', () => {
    const d = newDesiredStateOfWorld();
    d.addPodToVolume(want('a', 'h1'));
    const l = d.volumesToMount();
    l.pop();
    expect(d.volumesToMount()).toHaveLength(1);
  });

  it('markVolumesReportedInUse unmarks the volumes not named', () => {
    const d = newDesiredStateOfWorld();
    d.addPodToVolume(want('a', 'h1'));
    d.addPodToVolume(want('a', 'h2'));
    d.markVolumesReportedInUse([vol('h1')]);
    d.markVolumesReportedInUse([vol('h2')]);
    expect(d.volumesForPod(pod('a').uid).map((v) => [v.volume, v.reportedInUse])).toEqual([
      [vol('h1'), false],
      [vol('h2'), true],
    ]);
  });

  it('changes its volume set generation only when a volume joins or leaves', () => {
    const d = newDesiredStateOfWorld();
    const g0 = d.volumeSetGeneration();
    d.addPodToVolume(want('a', 'h1'));
    const g1 = d.volumeSetGeneration();
    expect(g1).not.toBe(g0);
    d.addPodToVolume(want('b', 'h1')); // another pod of the same volume
    d.addPodToVolume(want('a', 'h1', { outerSpecName: 'renamed' }));
    d.markVolumesReportedInUse([vol('h1')]);
    expect(d.volumeSetGeneration()).toBe(g1);
    d.deletePod(pod('a').uid); // h1 stays for b
    expect(d.volumeSetGeneration()).toBe(g1);
    d.deletePod(pod('b').uid);
    const g2 = d.volumeSetGeneration();
    expect(g2).not.toBe(g1);
    d.addPodToVolume(want('a', 'h1')); // the same name again is a new volume
    expect(d.volumeSetGeneration()).not.toBe(g2);
  });
});
