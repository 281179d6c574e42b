import { access } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../../../util/log.js';
import { isMountPoint } from '../../../mount/mountinfo.js';
import type { ActualStateOfWorld } from '../cache/actual-state.js';
import {
  blockStagingPath,
  blockVolDataPath,
  csiPluginDir,
  deviceMountPath,
  deviceVolDataPath,
  podsDir,
  VOL_DATA_FILE,
} from '../operations/paths.js';
import { readVolData } from '../operations/voldata.js';
import { csiSpecFor } from '../plugins/csi.js';
import { listDir } from '../plugins/fsutil.js';
import { VOLUME_PLUGINS } from '../plugins/registry.js';
import { csiVolumeName, podUid } from '../types.js';

const exists = (p: string): Promise<boolean> =>
  access(p).then(
    () => true,
    () => false,
  );

/**
 * Rebuilds the actual state after a restart: each plugin reconstructs its volumes of each pod
 * directory, then CSI stagings no pod mentions. Everything is Uncertain: CSI publications and
 * stagings, emptyDirs, configMaps (a write may have been interrupted), so a wanted volume is published/staged again (idempotent, no second
 * mount) and an unwanted one is torn down; the reconciler does neither before the populator's
 * first full pass. Returns how many (volume, pod) pairs were reconstructed.
 */
export async function reconstructActualState(o: {
  rootDir: string;
  asw: ActualStateOfWorld;
  log: Logger;
}): Promise<number> {
  const { rootDir, asw, log } = o;
  let n = 0;
  for (const uidStr of await listDir(podsDir(rootDir))) {
    const uid = podUid(uidStr);
    for (const plugin of Object.values(VOLUME_PLUGINS)) n += await plugin.reconstruct({ rootDir, asw, log }, uid);
  }
  // Block stagings no pod mentions.
  for (const specName of await listDir(path.join(csiPluginDir(rootDir), 'volumeDevices'))) {
    if (specName === 'staging' || specName === 'publish') continue;
    const data = await readVolData(blockVolDataPath(rootDir, specName));
    if (!data) continue;
    const name = csiVolumeName(data.driverName, data.volumeHandle);
    if (asw.attachedVolume(name)) continue;
    const spec = csiSpecFor(specName, data.driverName, data.volumeHandle, false, true);
    asw.markVolumeAttached(name, spec, '');
    asw.markDeviceMounted(name, spec, blockStagingPath(rootDir, specName), 'Uncertain');
  }
  // Stagings no pod directory mentions (a crash between unpublish and unstage, or during staging).
  for (const driver of await listDir(csiPluginDir(rootDir))) {
    if (driver === 'volumeDevices') continue;
    for (const hash of await listDir(path.join(csiPluginDir(rootDir), driver))) {
      const file = path.join(csiPluginDir(rootDir), driver, hash, VOL_DATA_FILE);
      const raw = await readVolData(file); // the device file's driverName/volumeHandle parse the same way
      if (!raw) continue;
      const name = csiVolumeName(raw.driverName, raw.volumeHandle);
      if (asw.attachedVolume(name)) continue;
      const staging = deviceMountPath(rootDir, raw.driverName, raw.volumeHandle);
      if (!(await exists(deviceVolDataPath(staging))) && !(await isMountPoint(staging))) continue;
      const spec = csiSpecFor(`staged-${hash.slice(0, 12)}`, raw.driverName, raw.volumeHandle, false);
      asw.markVolumeAttached(name, spec, '');
      asw.markDeviceMounted(name, spec, staging, 'Uncertain');
    }
  }
  return n;
}
