import { lstat, lchown, chmod, readdir } from 'node:fs/promises';
import path from 'node:path';

/**
 * Applies fsGroup with OnRootMismatch semantics: when the volume root's group is already `gid`,
 * nothing is walked; otherwise every file gets group `gid` and group rw (directories also x and
 * setgid). The walk stays on the root's filesystem and never follows symlinks.
 */
export async function applyFsGroup(root: string, gid: number): Promise<void> {
  const st = await lstat(root);
  if (st.gid === gid && (st.mode & 0o2000) !== 0) return;
  const walk = async (p: string): Promise<void> => {
    const s = await lstat(p);
    if (s.dev !== st.dev || s.isSymbolicLink()) return;
    await lchown(p, s.uid, gid);
    if (s.isDirectory()) {
      await chmod(p, (s.mode & 0o7777) | 0o2070);
      for (const e of await readdir(p)) await walk(path.join(p, e));
    } else if (s.isFile()) {
      await chmod(p, (s.mode & 0o7777) | 0o060);
    }
  };
  await walk(root);
}
