import { lstat, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { finishDelete } from './controller/delete-volume.js';
import { finishSnapshotDelete } from './controller/snapshots.js';
import type { HostpathDriver } from './driver.js';
import { exists, growFile } from './fsops.js';
import { dataLayout } from './state.js';
import { releaseUnusedLoops, removeVolumeData } from './volume-data.js';

/**
 * Start-up, before the socket is served: brings the disk back to what the state file says after a
 * crash at any instant.
 * - An intent to create never replied (the reply waits for the settled record), so nobody knows
 *   its id and its data may be half copied: it is rolled back; the CO's retry creates the volume
 *   (or snapshot) once. An intent to delete is finished.
 * - A directory or file under volumes/ or snapshots/ that no record names is removed (none can
 *   appear any more: intents are durable before data exists; this clears leaks of older versions).
 *   Skipped when there was no state file at all: that is a lost state, not a leak.
 * - A file volume is grown to its recorded size (an expansion recorded but not carried out), and
 *   loop devices no staging or publication record needs are detached (a staging step cut short).
 * A failure is logged and left for the next call or start-up; it never stops the driver.
 */
export async function recover(d: HostpathDriver): Promise<void> {
  const attempt = async (what: string, fields: Record<string, string>, fn: () => Promise<void>): Promise<void> => {
    try {
      await fn();
    } catch (e) {
      d.log.warn(`start-up: ${what} failed; left for later`, { ...fields, error: String(e) });
    }
  };
  for (const v of Object.values(d.volumes).filter((x) => x.pending)) {
    await attempt(`settling volume intent ${v.pending}`, { id: v.id, name: v.name }, async () => {
      await finishDelete(d, v);
      d.log.info(
        v.pending === 'create'
          ? 'start-up: rolled back an unfinished CreateVolume'
          : 'start-up: finished a DeleteVolume',
        { id: v.id, name: v.name },
      );
    });
  }
  for (const s of Object.values(d.snapshots).filter((x) => x.pending)) {
    await attempt(`settling snapshot intent ${s.pending}`, { id: s.id, name: s.name }, async () =>
      finishSnapshotDelete(d, s),
    );
  }
  if (d.store.loaded) await removeUnnamed(d);
  for (const v of d.liveVolumes()) {
    if (dataLayout(v) !== 'file') continue;
    const file = d.volumePath(v.id);
    await attempt('settling volume data', { id: v.id }, async () => {
      if (await exists(file)) await growFile(file, v.capacityBytes);
      await releaseUnusedLoops(d, v);
    });
  }
}

async function removeUnnamed(d: HostpathDriver): Promise<void> {
  const dir = (kind: 'volumes' | 'snapshots'): string => path.join(d.config.stateDir, kind);
  for (const id of await readdir(dir('volumes'))) {
    if (d.volumes[id]) continue;
    await unnamed(d, 'volume', id, async () => {
      const isFile = (await lstat(d.volumePath(id))).isFile();
      await removeVolumeData(d, { id, kind: isFile ? 'block' : 'mount' });
    });
  }
  for (const id of await readdir(dir('snapshots'))) {
    if (d.snapshots[id]) continue;
    await unnamed(d, 'snapshot', id, async () => rm(d.snapshotPath(id), { recursive: true, force: true }));
  }
}

async function unnamed(d: HostpathDriver, what: string, id: string, remove: () => Promise<void>): Promise<void> {
  try {
    await remove();
    d.log.warn(`start-up: removed ${what} data no record names`, { id });
  } catch (e) {
    d.log.warn(`start-up: removing ${what} data no record names failed; left for later`, { id, error: String(e) });
  }
}
