import { readdir } from 'node:fs/promises';
import type { Logger } from '../../../util/log.js';
import path from 'node:path';
import { unmountAll } from '../../../mount/mount.js';
import { mountsUnder, readMountInfo, type MountInfoEntry } from '../../../mount/mountinfo.js';
import { podDir, podPluginDir, podsDir, podSubPathsDir, subPathDir } from '../operations/paths.js';
import { listDir } from '../plugins/fsutil.js';
import { cleanSubPaths } from '../subpath/subpath.js';
import { removeTreeSafely } from '../operations/safe-remove.js';
import { podUid, type PluginName, type PodUid } from '../types.js';

const TMPFS_PLUGINS: readonly PluginName[] = [
  'kubernetes.io/empty-dir',
  'kubernetes.io/secret',
  'kubernetes.io/downward-api',
  'kubernetes.io/projected',
];

/** A tmpfs mounted exactly at `pods/<uid>/volumes/<tmpfs plugin>/<name>`: ours to unmount. */
export function isOwnTmpfs(rootDir: string, uid: PodUid, m: MountInfoEntry): boolean {
  if (m.fsType !== 'tmpfs') return false;
  return TMPFS_PLUGINS.some((p) => path.dirname(m.mountPoint) === podPluginDir(rootDir, uid, p));
}

/**
 * Removes pod directories of pods this node no longer knows (not desired, nothing in the actual
 * state, not a live pod), after unmounting the pod's own subPath binds and tmpfs volumes, but only when nothing else
 * at or below them is mounted per the mount table;
 * the removal itself never crosses a mount point. Returns the uids removed.
 */
export async function cleanupOrphanedPodDirs(o: {
  rootDir: string;
  keep: (uid: PodUid) => boolean;
  log: Logger;
}): Promise<PodUid[]> {
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
    // subPath bind mounts are ours whatever the volume type (a hostPath has nothing else to reconstruct them by).
    for (const vol of await listDir(podSubPathsDir(o.rootDir, uid))) {
      await cleanSubPaths(subPathDir(o.rootDir, uid, vol)).catch((e: unknown) =>
        o.log.warn('subPaths of an orphaned pod not cleaned', { pod: uid, volume: vol, error: String(e) }),
      );
    }
    // Memory-backed volumes of the pod (tmpfs of ours at a volume dir) are unmounted first: a crash
    // between the pod's teardown and its directory's removal must not leave RAM held forever.
    for (const m of await mountsUnder(dir, table)) {
      if (!isOwnTmpfs(o.rootDir, uid, m)) continue;
      await unmountAll(m.mountPoint).catch((e: unknown) =>
        o.log.warn('tmpfs of an orphaned pod not unmounted', { mount: m.mountPoint, error: String(e) }),
      );
    }
    const mounted = await mountsUnder(dir);
    if (mounted.length > 0) {
      o.log.warn('orphaned pod directory still has mounts; not removing it', {
        pod: uid,
        mounts: mounted.map((m) => m.mountPoint).join(','),
      });
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
