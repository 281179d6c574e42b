import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { newActualStateOfWorld } from '../cache/actual-state.js';
import {
  blockVolDataPath,
  csiPublishPath,
  deviceMountPath,
  deviceVolDataPath,
  podDeviceDir,
  podVolumeDir,
} from '../operations/paths.js';
import { newLogger } from '../../../util/log.js';
import { podUid } from '../types.js';
import { reconstructActualState } from './reconstruct.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function root(): string {
  const d = mkdtempSync(path.join(tmpdir(), 'vm-reconstruct-'));
  dirs.push(d);
  return d;
}

const log = newLogger('test');
const json = (file: string, o: unknown): void => {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify(o));
};

describe('reconstructActualState', () => {
  it('marks CSI pod volumes, stagings and emptyDirs Uncertain, skips unusable vol_data', async () => {
    const r = root();
    const uid = podUid('u1');
    const target = csiPublishPath(r, uid, 'pv1');
    mkdirSync(target, { recursive: true });
    json(path.join(path.dirname(target), 'vol_data.json'), {
      specVolID: 'pv1',
      driverName: 'd',
      volumeHandle: 'h1',
      nodeName: 'n',
      attachmentID: '',
      volumeLifecycleMode: 'Persistent',
      outerSpecName: 'data',
    });
    mkdirSync(podVolumeDir(r, uid, 'kubernetes.io/csi', 'broken'), { recursive: true });
    mkdirSync(podVolumeDir(r, uid, 'kubernetes.io/empty-dir', 'scratch'), { recursive: true });
    // a staging left without a pod
    json(deviceVolDataPath(deviceMountPath(r, 'd', 'h2')), { driverName: 'd', volumeHandle: 'h2' });
    // a block pod volume
    json(blockVolDataPath(r, 'pvb'), { driverName: 'd', volumeHandle: 'hb' });
    mkdirSync(podDeviceDir(r, uid), { recursive: true });
    symlinkSync('/nonexistent', path.join(podDeviceDir(r, uid), 'pvb'));

    const asw = newActualStateOfWorld();
    expect(await reconstructActualState({ rootDir: r, asw, log })).toBe(3);
    const byName = Object.fromEntries(asw.attachedVolumes().map((v) => [v.volume, v]));
    expect(Object.keys(byName).sort()).toEqual([
      'kubernetes.io/csi/d^h1',
      'kubernetes.io/csi/d^h2',
      'kubernetes.io/csi/d^hb',
      `kubernetes.io/empty-dir/u1-scratch`,
    ]);
    expect(byName['kubernetes.io/csi/d^h1']).toMatchObject({
      deviceState: 'Uncertain',
      deviceMountPath: deviceMountPath(r, 'd', 'h1'),
    });
    expect(byName['kubernetes.io/csi/d^h1']?.pods[0]).toMatchObject({
      state: 'Uncertain',
      outerSpecName: 'data',
      hostPath: target,
    });
    expect(byName['kubernetes.io/csi/d^h2']).toMatchObject({ deviceState: 'Uncertain', pods: [] });
    expect(byName['kubernetes.io/csi/d^hb']?.spec.mode).toBe('Block');
    expect(byName['kubernetes.io/empty-dir/u1-scratch']?.pods[0]?.state).toBe('Uncertain');
  });

  it('each plugin reconstructs its own pod volumes, Uncertain (SetUp again or TearDown once the populator has run)', async () => {
    const r = root();
    const uid = podUid('u2');
    mkdirSync(path.join(podVolumeDir(r, uid, 'kubernetes.io/configmap', 'cfg'), '..data_tmp'), { recursive: true });
    mkdirSync(podVolumeDir(r, uid, 'kubernetes.io/secret', 'creds'), { recursive: true });
    mkdirSync(podVolumeDir(r, uid, 'kubernetes.io/local-volume', 'pv-local'), { recursive: true });
    mkdirSync(path.join(r, 'pods', uid, 'volumeDevices', 'kubernetes.io~local-volume'), { recursive: true });
    symlinkSync('/dev/loop0', path.join(r, 'pods', uid, 'volumeDevices', 'kubernetes.io~local-volume', 'pv-raw'));
    const asw = newActualStateOfWorld();
    expect(await reconstructActualState({ rootDir: r, asw, log })).toBe(4);
    const got = asw
      .mountedPods()
      .map((m) => [m.volume, m.spec.plugin, m.spec.mode, m.state])
      .sort();
    expect(got).toEqual([
      ['kubernetes.io/configmap/u2-cfg', 'kubernetes.io/configmap', 'Filesystem', 'Uncertain'],
      ['kubernetes.io/local-volume/pv-local', 'kubernetes.io/local-volume', 'Filesystem', 'Uncertain'],
      ['kubernetes.io/local-volume/pv-raw', 'kubernetes.io/local-volume', 'Block', 'Uncertain'],
      ['kubernetes.io/secret/u2-creds', 'kubernetes.io/secret', 'Filesystem', 'Uncertain'],
    ]);
  });

  it('an empty root reconstructs nothing', async () => {
    const asw = newActualStateOfWorld();
    expect(await reconstructActualState({ rootDir: root(), asw, log })).toBe(0);
    expect(asw.attachedVolumes()).toEqual([]);
  });
});
