import { lstat, readdir, rmdir, unlink } from 'node:fs/promises';
import path from 'node:path';
import { mountsUnder, readMountInfo } from '../../../mount/mountinfo.js';

/**
 * Deletes `dir` and what is under it, refusing up front when anything at or below it is mounted
 * (by the mount table), and never descending into another filesystem or through a symlink (st_dev
 * checked per directory), so data behind a mount point can never be deleted. Missing is success.
 */
export async function removeTreeSafely(dir: string): Promise<void> {
  let root;
  try {
    root = await lstat(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw e;
  }
  const mounts = await mountsUnder(dir, await readMountInfo());
  if (mounts.length > 0)
    throw new Error(`refusing to remove ${dir}: ${mounts.map((m) => m.mountPoint).join(', ')} still mounted`);
  if (!root.isDirectory()) return unlink(dir);
  const walk = async (p: string): Promise<void> => {
    for (const name of await readdir(p)) {
      const child = path.join(p, name);
      const st = await lstat(child);
      if (st.isDirectory()) {
        if (st.dev !== root.dev) throw new Error(`refusing to cross into another filesystem at ${child}`);
        await walk(child);
        await rmdir(child);
      } else await unlink(child);
    }
  };
  await walk(dir);
  await rmdir(dir);
}
