import { access, readdir } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../../../util/log.js';
import { isMountPoint } from '../../../mount/mountinfo.js';
import type { ActualStateOfWorld } from '../cache/actual-state.js';
import { blockStagingPath, blockVolDataPath, csiPluginDir, deviceMountPath, deviceVolDataPath, podDeviceDir, podsDir, podVolumeDir, VOL_DATA_FILE } from '../operations/paths.js';
import { readVolData } from '../operations/voldata.js';
import { csiVolumeName, escapePluginName, podUid, volumeName, type VolumeSpec } from '../types.js';

async function list(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch {
    return [];
  }
}

const exists = (p: string): Promise<boolean> => access(p).then(() => true, () => false);

function csiSpecFor(specName: string, driver: string, handle: string, ephemeral: boolean, block = false): VolumeSpec {
  return {
    plugin: 'kubernetes.io/csi',
    specName,
    mode: block ? 'Block' : 'Filesystem',
    readOnly: false,
    ...(ephemeral ? { ephemeral } : {}),
    csi: { driver, volumeHandle: handle, fsType: '', mountOptions: [], volumeAttributes: {}, accessMode: 'SINGLE_NODE_WRITER' },
  };
}

/**
 * Rebuilds the actual state after a restart from the pod directories' vol_data.json and the
 * staging directories. Nothing is trusted as Mounted except emptyDir directories: CSI publications
 * and stagings are Uncertain, so a wanted volume is published/staged again (idempotent, no second
 * mount) and an unwanted one is torn down; the reconciler does neither before the populator's
 * first full pass. Returns how many (volume, pod) pairs were reconstructed.
 */
export async function reconstructActualState(o: { rootDir: string; asw: ActualStateOfWorld; log: Logger }): Promise<number> {
  const { rootDir, asw, log } = o;
  let n = 0;
  for (const uidStr of await list(podsDir(rootDir))) {
    const uid = podUid(uidStr);
    const pod = { uid, namespace: '', name: '' };
    const csiDir = path.dirname(podVolumeDir(rootDir, uid, 'kubernetes.io/csi', 'x'));
    for (const specName of await list(csiDir)) {
      const data = await readVolData(path.join(csiDir, specName, VOL_DATA_FILE));
      if (!data) {
        log.warn('pod volume without a usable vol_data.json; left for orphan cleanup', { dir: path.join(csiDir, specName) });
        continue;
      }
      const ephemeral = data.volumeLifecycleMode === 'Ephemeral';
      const spec = csiSpecFor(specName, data.driverName, data.volumeHandle, ephemeral);
      const name = csiVolumeName(data.driverName, data.volumeHandle);
      asw.markVolumeAttached(name, spec, '');
      if (!ephemeral) asw.markDeviceMounted(name, deviceMountPath(rootDir, data.driverName, data.volumeHandle), 'Uncertain');
      asw.markVolumeMounted({ volume: name, pod, outerSpecName: data.outerSpecName ?? specName, spec, state: 'Uncertain', hostPath: path.join(csiDir, specName, 'mount') });
      n++;
    }
    // Block: the pod's device symlinks, with driver and handle from the global vol_data.json.
    for (const specName of await list(podDeviceDir(rootDir, uid))) {
      const data = await readVolData(blockVolDataPath(rootDir, specName));
      if (!data) {
        log.warn('block volume without a usable vol_data.json; left for orphan cleanup', { pod: uid, volume: specName });
        continue;
      }
      const spec = csiSpecFor(specName, data.driverName, data.volumeHandle, false, true);
      const name = csiVolumeName(data.driverName, data.volumeHandle);
      asw.markVolumeAttached(name, spec, '');
      asw.markDeviceMounted(name, blockStagingPath(rootDir, specName), 'Uncertain');
      asw.markVolumeMounted({ volume: name, pod, outerSpecName: specName, spec, state: 'Uncertain', hostPath: path.join(podDeviceDir(rootDir, uid), specName) });
      n++;
    }
    const emptyDir = path.join(podsDir(rootDir), uid, 'volumes', escapePluginName('kubernetes.io/empty-dir'));
    for (const specName of await list(emptyDir)) {
      const name = volumeName(`kubernetes.io/empty-dir/${uid}-${specName}`);
      const spec: VolumeSpec = { plugin: 'kubernetes.io/empty-dir', specName, mode: 'Filesystem', readOnly: false };
      asw.markVolumeAttached(name, spec, '');
      asw.markVolumeMounted({ volume: name, pod, outerSpecName: specName, spec, state: 'Mounted', hostPath: path.join(emptyDir, specName) });
      n++;
    }
  }
  // Block stagings no pod mentions.
  for (const specName of await list(path.join(csiPluginDir(rootDir), 'volumeDevices'))) {
    if (specName === 'staging' || specName === 'publish') continue;
    const data = await readVolData(blockVolDataPath(rootDir, specName));
    if (!data) continue;
    const name = csiVolumeName(data.driverName, data.volumeHandle);
    if (asw.attachedVolume(name)) continue;
    asw.markVolumeAttached(name, csiSpecFor(specName, data.driverName, data.volumeHandle, false, true), '');
    asw.markDeviceMounted(name, blockStagingPath(rootDir, specName), 'Uncertain');
  }
  // Stagings no pod directory mentions (a crash between unpublish and unstage, or during staging).
  for (const driver of await list(csiPluginDir(rootDir))) {
    if (driver === 'volumeDevices') continue;
    for (const hash of await list(path.join(csiPluginDir(rootDir), driver))) {
      const file = path.join(csiPluginDir(rootDir), driver, hash, VOL_DATA_FILE);
      const raw = await readVolData(file); // the device file's driverName/volumeHandle parse the same way
      if (!raw) continue;
      const name = csiVolumeName(raw.driverName, raw.volumeHandle);
      if (asw.attachedVolume(name)) continue;
      const staging = deviceMountPath(rootDir, raw.driverName, raw.volumeHandle);
      if (!(await exists(deviceVolDataPath(staging))) && !(await isMountPoint(staging))) continue;
      asw.markVolumeAttached(name, csiSpecFor(`staged-${hash.slice(0, 12)}`, raw.driverName, raw.volumeHandle, false), '');
      asw.markDeviceMounted(name, staging, 'Uncertain');
    }
  }
  return n;
}
