import { lstat, mkdir, open, readdir, rm, statfs, truncate } from 'node:fs/promises';
import path from 'node:path';
import { run } from '../../mount/exec.js';
import { mountsUnder } from '../../mount/mountinfo.js';
import { failedPrecondition, outOfRange } from './errors.js';
import type { DataLayout } from './state.js';

/** Copies can be large; a 10 GiB sparse file copies in seconds, a full one in minutes. */
const COPY_TIMEOUT_MS = 30 * 60_000;

/** Creates the backing data: a directory, or a sparse file of `bytes` (no blocks allocated). */
export async function createData(layout: DataLayout, p: string, bytes: number): Promise<void> {
  if (layout === 'directory') {
    await mkdir(p, { recursive: true, mode: 0o777 });
    return;
  }
  const fh = await open(p, 'w', 0o600);
  await fh.close();
  await truncateTo(p, bytes);
}

/**
 * Sets a backing file's size. A size past the largest file the host filesystem allows (16 TiB on
 * ext4 with 4 KiB blocks) is EFBIG from the kernel: for CSI that is a capacity the driver cannot
 * give, OUT_OF_RANGE, not INTERNAL.
 */
export async function truncateTo(p: string, bytes: number): Promise<void> {
  try {
    await truncate(p, bytes);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EFBIG')
      throw outOfRange(
        `${bytes} bytes is larger than the largest file the filesystem under ${path.dirname(p)} can hold`,
      );
    throw e;
  }
}

/** Copies volume data: a directory tree (attributes kept) or a file (holes kept). Never through a shell. */
export async function copyData(layout: DataLayout, src: string, dst: string): Promise<void> {
  if (layout === 'directory') {
    await mkdir(dst, { recursive: true, mode: 0o777 });
    await run('cp', ['-a', '--reflink=auto', '--', `${src}/.`, `${dst}/`], { timeoutMs: COPY_TIMEOUT_MS });
    return;
  }
  await run('cp', ['--sparse=always', '--reflink=auto', '--', src, dst], { timeoutMs: COPY_TIMEOUT_MS });
}

/** Grows a volume's backing file; never shrinks it. */
export async function growFile(p: string, bytes: number): Promise<void> {
  const st = await lstat(p);
  if (st.size < bytes) await truncateTo(p, bytes);
}

/**
 * Removes backing data. Refuses (FAILED_PRECONDITION) when something is still mounted inside it:
 * recursive deletion across a mount point would destroy whatever is mounted there.
 */
export async function removeData(p: string): Promise<void> {
  const mounted = await mountsUnder(p);
  if (mounted.length > 0)
    throw failedPrecondition(`${p} still has mounts: ${mounted.map((m) => m.mountPoint).join(', ')}`);
  await rm(p, { recursive: true, force: true });
}

export async function exists(p: string): Promise<boolean> {
  try {
    await lstat(p);
    return true;
  } catch {
    return false;
  }
}

export interface Usage {
  readonly usedBytes: number;
  readonly usedInodes: number;
}

/** Bytes allocated (st_blocks) and inodes under a directory, without crossing mount points. */
export async function directoryUsage(dir: string): Promise<Usage> {
  const root = await lstat(dir);
  let usedBytes = 0;
  let usedInodes = 0;
  const walk = async (p: string): Promise<void> => {
    const st = await lstat(p);
    if (st.dev !== root.dev) return;
    usedBytes += st.blocks * 512;
    usedInodes += 1;
    if (!st.isDirectory()) return;
    for (const name of await readdir(p)) await walk(path.join(p, name));
  };
  await walk(dir);
  return { usedBytes, usedInodes };
}

export interface FsStats {
  readonly totalBytes: number;
  /** Blocks in use (total - free), as df counts them. */
  readonly usedBytes: number;
  /** Free to an unprivileged user (f_bavail). */
  readonly availableBytes: number;
  readonly totalInodes: number;
  readonly freeInodes: number;
}

/** statfs(2) of the filesystem holding `p`, in bytes and inodes. */
export async function filesystemStats(p: string): Promise<FsStats> {
  const s = await statfs(p);
  return {
    totalBytes: s.blocks * s.bsize,
    usedBytes: (s.blocks - s.bfree) * s.bsize,
    availableBytes: s.bavail * s.bsize,
    totalInodes: s.files,
    freeInodes: s.ffree,
  };
}
