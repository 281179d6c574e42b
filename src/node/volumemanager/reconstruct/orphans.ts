import { readdir } from 'node:fs/promises';
import type { Logger } from '../../../util/log.js';
import { mountsUnder, readMountInfo } from '../../../mount/mountinfo.js';
import { podDir, podsDir } from '../operations/paths.js';
import { removeTreeSafely } from '../operations/safe-remove.js';
import { podUid, type PodUid } from '../types.js';

/**
 * Removes pod directories of pods this node no longer knows (not desired, nothing in the actual
 * state, not a live pod), but only when nothing at or below them is mounted per the mount table;
 * the removal itself never crosses a mount point. Returns the uids removed.
 */
export async function cleanupOrphanedPodDirs(o: { rootDir: string; keep: (uid: PodUid) => boolean; log: Logger }): Promise<PodUid[]> {
  let uids: string[];
  try {
    uids = await readdir(podsDir(o.rootDir));
  } catch {
    return [];
  }
  const removed: PodUid[] = [];
  const table = await readMountInfo();
  for (const s of uids) {
    const uid = podUid(s);
    if (o.keep(uid)) continue;
    const dir = podDir(o.rootDir, uid);
    const mounted = await mountsUnder(dir, table);
    if (mounted.length > 0) {
      o.log.warn('orphaned pod directory still has mounts; not removing it', { pod: uid, mounts: mounted.map((m) => m.mountPoint).join(',') });
      continue;
    }
    try {
      await removeTreeSafely(dir);
      removed.push(uid);
    } catch (e) {
      o.log.warn('orphaned pod directory not removed', { pod: uid, error: String(e) });
    }
  }
  return removed;
}
