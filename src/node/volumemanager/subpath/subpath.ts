import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, realpathSync } from 'node:fs';
import { lstat, mkdir, open, readdir, rm, rmdir } from 'node:fs/promises';
import path from 'node:path';
import { bindMount, unmountAll } from '../../../mount/mount.js';
import { isMountPoint, mountsUnder, readMountInfo } from '../../../mount/mountinfo.js';
import { InvalidError } from '../../../util/errors.js';

/** A subPath that must not be mounted: absolute, `..`, or a symlink on the way (possible escape). */
export class SubPathError extends InvalidError {}

/** Checks the subPath string itself (kubelet validation: relative, no `..` component). */
export function validateSubPath(subPath: string): string[] {
  if (subPath === '') throw new SubPathError('subPath is empty');
  if (path.isAbsolute(subPath)) throw new SubPathError(`subPath ${subPath} must be a relative path`);
  const parts = subPath.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.some((p) => p === '..')) throw new SubPathError(`subPath ${subPath} must not contain '..'`);
  if (parts.length === 0) throw new SubPathError(`subPath ${subPath} names the volume root`);
  return parts;
}

const procFd = (fd: number): string => `/proc/${process.pid}/fd/${fd}`;

const within = (p: string, root: string): boolean => p === root || p.startsWith(root.endsWith('/') ? root : `${root}/`);

/**
 * The kubelet's subPath rule: symlinks inside the volume are followed (a configMap's `key ->
 * ..data/key`), but what they resolve to must stay inside the volume. Returns the volume's real
 * root and the subPath rewritten relative to it (missing trailing components kept as named).
 */
export function resolveSubPathWithin(volumeRoot: string, subPath: string): { root: string; subPath: string } {
  const parts = validateSubPath(subPath);
  const root = realpathSync(volumeRoot);
  let i = parts.length;
  for (; i > 0; i--) {
    try {
      lstatSync(path.join(root, ...parts.slice(0, i)));
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
  }
  let existing: string;
  try {
    existing = realpathSync(path.join(root, ...parts.slice(0, i)));
  } catch {
    throw new SubPathError(`subPath ${subPath}: ${parts.slice(0, i).join('/')} is a dangling symbolic link`);
  }
  if (!within(existing, root))
    throw new SubPathError(
      `subPath ${subPath} passes a symbolic link that resolves to ${existing}, outside the volume; refusing to follow it`,
    );
  const rel = path.relative(root, path.join(existing, ...parts.slice(i)));
  if (rel === '') throw new SubPathError(`subPath ${subPath} names the volume root`);
  return { root, subPath: rel };
}

/**
 * Opens `volumeRoot/subPath` walking one component at a time, each opened relative to its parent's
 * descriptor with O_NOFOLLOW, so a symlink anywhere (including one swapped in concurrently) fails
 * instead of leading out of the volume (CVE-2017-1002101, CVE-2021-25741). Missing directories are
 * created, as the kubelet does. Returns the open descriptor of the final component; close it.
 */
export function openSubPathNoFollow(volumeRoot: string, subPath: string): number {
  const parts = validateSubPath(subPath);
  let fd = openSync(volumeRoot, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  try {
    for (let i = 0; i < parts.length; i++) {
      const last = i === parts.length - 1;
      const child = `${procFd(fd)}/${parts[i]}`;
      let next: number;
      try {
        next = openSync(child, constants.O_RDONLY | constants.O_NOFOLLOW | (last ? 0 : constants.O_DIRECTORY));
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') {
          mkdirSync(child, { mode: 0o750 });
          next = openSync(child, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_DIRECTORY);
        } else if (code === 'ELOOP' || code === 'ENOTDIR') {
          throw new SubPathError(
            `subPath ${subPath}: ${parts.slice(0, i + 1).join('/')} is a symbolic link or not a directory; refusing to follow it out of the volume`,
          );
        } else throw e;
      }
      closeSync(fd);
      fd = next;
    }
    return fd;
  } catch (e) {
    closeSync(fd);
    throw e;
  }
}

/**
 * Bind-mounts the subPath at `target` (created as a directory or an empty file to match). The
 * source is resolved once: a configMap subPath keeps the file of that moment (updates swap `..data`).
 * Idempotent: an existing mount at `target` is kept.
 */
export async function mountSubPath(o: {
  volumeRoot: string;
  subPath: string;
  target: string;
  readOnly: boolean;
}): Promise<void> {
  if (await isMountPoint(o.target)) return;
  // Resolved first (symlinks inside the volume allowed), then opened without following any link:
  // a link swapped in between resolving and opening fails instead of leading out.
  const r = resolveSubPathWithin(o.volumeRoot, o.subPath);
  const fd = openSubPathNoFollow(r.root, r.subPath);
  try {
    const isDir = fstatSync(fd).isDirectory();
    await mkdir(path.dirname(o.target), { recursive: true, mode: 0o750 });
    if (isDir) await mkdir(o.target, { recursive: true, mode: 0o750 });
    else await (await open(o.target, 'a', 0o640)).close();
    // The source is our open descriptor, not a path: nothing can be swapped in between check and mount.
    await bindMount(procFd(fd), o.target, { readOnly: o.readOnly });
  } finally {
    closeSync(fd);
  }
}

/**
 * Removes `<pod>/volume-subpaths/<volume>`: each `<container>/<index>` entry is unmounted (by the
 * mount table) and removed non-recursively. Idempotent; refuses to delete anything still mounted.
 */
export async function cleanSubPaths(volumeSubPathDir: string): Promise<void> {
  let containers: string[];
  try {
    containers = await readdir(volumeSubPathDir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw e;
  }
  const table = await readMountInfo();
  for (const c of containers) {
    const cdir = path.join(volumeSubPathDir, c);
    for (const idx of await readdir(cdir).catch(() => [] as string[])) {
      const entry = path.join(cdir, idx);
      if (table.some((m) => m.mountPoint === entry)) await unmountAll(entry);
      if ((await mountsUnder(entry)).length > 0) throw new Error(`${entry} still has mounts; not removing it`);
      const st = await lstat(entry).catch(() => undefined);
      if (!st) continue;
      if (st.isDirectory()) await rmdir(entry);
      else await rm(entry);
    }
    await rmdir(cdir).catch(ignoreMissing);
  }
  await rmdir(volumeSubPathDir).catch(ignoreMissing);
  await rmdir(path.dirname(volumeSubPathDir)).catch(() => undefined); // volume-subpaths, if now empty
}

function ignoreMissing(e: NodeJS.ErrnoException): void {
  if (e.code !== 'ENOENT') throw e;
}
