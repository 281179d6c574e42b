import { lstat, lchown, chmod, readdir } from 'node:fs/promises';
import path from 'node:path';

export interface FsGroupOptions {
  /**
   * pod.spec.securityContext.fsGroupChangePolicy: `Always` (the default) walks the volume on every
   * SetUp; `OnRootMismatch` only when the root's group or permissions do not match yet.
   */
  readonly policy?: 'Always' | 'OnRootMismatch';
  /** A read-only volume (configMap, secret, ...): group read instead of read-write. */
  readonly readOnly?: boolean;
}

/**
 * The kubelet's SetVolumeOwnership: every file gets group `gid` and group rw (group r for a
 * read-only volume); directories also x and setgid. The walk stays on the root's filesystem and
 * never follows symlinks.
 */
export async function applyFsGroup(root: string, gid: number, o: FsGroupOptions = {}): Promise<void> {
  const fileMask = o.readOnly ? 0o040 : 0o060;
  const dirMask = 0o2000 | fileMask | 0o010;
  const st = await lstat(root);
  if (o.policy === 'OnRootMismatch' && st.gid === gid && (st.mode & dirMask) === dirMask) return;
  const walk = async (p: string): Promise<void> => {
    const s = await lstat(p);
    if (s.dev !== st.dev || s.isSymbolicLink()) return;
    await lchown(p, s.uid, gid);
    if (s.isDirectory()) {
      await chmod(p, (s.mode & 0o7777) | dirMask);
      for (const e of await readdir(p)) await walk(path.join(p, e));
    } else if (s.isFile()) {
      await chmod(p, (s.mode & 0o7777) | fileMask);
    }
  };
  await walk(root);
}
