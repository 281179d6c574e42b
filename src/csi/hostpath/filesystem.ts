/**
 * Filesystem volumes: a sparse file behind a loop device, formatted with a real filesystem, so
 * statfs reports the volume's own size and expansion is visible to the workload.
 */
import { access, chmod, readdir, stat } from 'node:fs/promises';
import { constants } from 'node:fs';
import path from 'node:path';
import { MountError, run } from '../../mount/exec.js';
import { isMountPoint } from '../../mount/mountinfo.js';
import { failedPrecondition } from './errors.js';

/** mkfs of a 1 TiB sparse file with lazy init takes seconds; a resize or fsck is similar. */
const FS_COMMAND_TIMEOUT_MS = 5 * 60_000;
const MiB = 1024 * 1024;

/** ext2/3/4 share their tools. */
const EXT = {
  tools: ['resize2fs', 'e2fsck', 'dumpe2fs'],
  // mke2fs refuses a filesystem of a few dozen KiB; 1 MiB keeps well clear of that.
  minBytes: MiB,
  growOffline: true,
} as const;

/**
 * The filesystems this driver can create and grow, with fast mkfs options: no discard of the
 * sparse file, inode tables and journal zeroed lazily, no blocks reserved for root (the workload,
 * often not root, should see the whole volume as available).
 */
export const FS_TYPES = {
  ext2: { ...EXT, mkfsArgs: ['-F', '-q', '-m', '0', '-E', 'nodiscard,lazy_itable_init=1'] },
  ext3: { ...EXT, mkfsArgs: ['-F', '-q', '-m', '0', '-E', 'nodiscard,lazy_itable_init=1,lazy_journal_init=1'] },
  ext4: { ...EXT, mkfsArgs: ['-F', '-q', '-m', '0', '-E', 'nodiscard,lazy_itable_init=1,lazy_journal_init=1'] },
  // mkfs.xfs (xfsprogs ≥ 5.19) refuses filesystems under 300 MiB; XFS grows only while mounted.
  xfs: { tools: ['xfs_growfs'], minBytes: 300 * MiB, growOffline: false, mkfsArgs: ['-f', '-q', '-K'] },
} as const;
export type FsType = keyof typeof FS_TYPES;

export function isFsType(t: string): t is FsType {
  return Object.hasOwn(FS_TYPES, t);
}

/** The smallest volume `fsType` can be made on. */
export function minimumBytes(fsType: FsType): number {
  return FS_TYPES[fsType].minBytes;
}

async function onPath(program: string): Promise<boolean> {
  const dirs = (process.env.PATH ?? '').split(':').filter((d) => d !== '');
  // mkfs.* and the grow tools live in sbin, which a non-login PATH may lack.
  for (const d of [...dirs, '/usr/local/sbin', '/usr/sbin', '/sbin']) {
    try {
      await access(path.join(d, program), constants.X_OK);
      return true;
    } catch {
      // not in this directory
    }
  }
  return false;
}

/**
 * Why `fsType` cannot be used for a filesystem volume, or undefined when it can: it must be one
 * this driver knows how to grow, with its mkfs and grow tools installed.
 */
export async function fsTypeUnsupportedReason(fsType: string, field: string): Promise<string | undefined> {
  if (!isFsType(fsType))
    return `${field} ${JSON.stringify(fsType)} is not supported (supported: ${Object.keys(FS_TYPES).join(', ')})`;
  for (const program of [`mkfs.${fsType}`, ...FS_TYPES[fsType].tools]) {
    if (!(await onPath(program)))
      return `${field} ${fsType} is not supported on this node: ${program} is not installed`;
  }
  return undefined;
}

/**
 * The filesystem type found on `device` by a low-level probe (`blkid -p`, no cache), or
 * undefined when it carries no recognisable signature. blkid exits 2 when nothing is found.
 */
export async function probeFsType(device: string): Promise<string | undefined> {
  try {
    const out = (await run('blkid', ['-p', '-o', 'value', '-s', 'TYPE', '--', device])).trim();
    return out === '' ? undefined : out;
  } catch (e) {
    if (e instanceof MountError && e.exitCode === 2) return undefined;
    throw e;
  }
}

/** Creates a filesystem on `device`. The caller must have probed it empty: this overwrites. */
export async function formatDevice(device: string, fsType: FsType): Promise<void> {
  await run(`mkfs.${fsType}`, [...FS_TYPES[fsType].mkfsArgs, '--', device], { timeoutMs: FS_COMMAND_TIMEOUT_MS });
}

/** Bytes an ext2/3/4 filesystem spans, from its superblock. */
async function extFilesystemBytes(device: string): Promise<number> {
  const out = await run('dumpe2fs', ['-h', device]);
  const field = (name: string): number => {
    const m = new RegExp(`^${name}:\\s+(\\d+)$`, 'm').exec(out);
    if (!m) throw new Error(`dumpe2fs -h ${device}: no "${name}" line`);
    return Number(m[1]);
  };
  return field('Block count') * field('Block size');
}

/**
 * Before mounting: grows an ext2/3/4 filesystem that is smaller than its device (a clone grown
 * past its source, a volume expanded while not staged). Offline resize2fs wants a freshly checked
 * filesystem, so e2fsck runs first — only then, never on an ordinary stage. A no-op for XFS,
 * which grows only while mounted (growMounted).
 */
export async function growUnmounted(device: string, fsType: FsType, deviceBytes: number): Promise<void> {
  if (!FS_TYPES[fsType].growOffline) return;
  const blockSlack = 64 * 1024; // a filesystem ends on a whole block (and group) boundary
  if ((await extFilesystemBytes(device)) + blockSlack >= deviceBytes) return;
  try {
    await run('e2fsck', ['-f', '-p', device], { timeoutMs: FS_COMMAND_TIMEOUT_MS });
  } catch (e) {
    // 1: errors were corrected, which preen mode may do on its own.
    if (!(e instanceof MountError && e.exitCode === 1)) throw e;
  }
  await run('resize2fs', [device], { timeoutMs: FS_COMMAND_TIMEOUT_MS });
}

/**
 * Grows the mounted filesystem on `device` (mounted at `mountPoint`) to fill the device, online.
 * A no-op when it already does, so it is safe to repeat after a crash.
 */
export async function growMounted(device: string, mountPoint: string, fsType: FsType): Promise<void> {
  if (fsType === 'xfs') {
    await run('xfs_growfs', [mountPoint], { timeoutMs: FS_COMMAND_TIMEOUT_MS });
    return;
  }
  try {
    await run('resize2fs', [device], { timeoutMs: FS_COMMAND_TIMEOUT_MS });
  } catch (e) {
    // The kernel's online resize (EXT4_IOC_RESIZE_FS) needs CAP_SYS_RESOURCE; a sandbox may drop it.
    if (e instanceof MountError && /permission denied/i.test(e.stderr)) {
      throw failedPrecondition(
        `online resize of ${fsType} on ${device} was refused by the kernel (it needs CAP_SYS_RESOURCE); the filesystem grows at its next staging`,
      );
    }
    throw e;
  }
}

/** Whether growMounted has to run after mounting for the filesystem to fill its device. */
export function growsOnlyMounted(fsType: FsType): boolean {
  return !FS_TYPES[fsType].growOffline;
}

/**
 * A fresh filesystem's root is root-owned 0755, which a non-root workload cannot write. Opens it
 * to everyone (as the directory volumes are) while it is still pristine — nothing in it but
 * lost+found — so a crash between mkfs and this step is repaired at the next mount, and a mode
 * the user set later is never touched.
 */
export async function openPristineRoot(mountPoint: string): Promise<void> {
  const st = await stat(mountPoint);
  if (st.uid !== 0 || (st.mode & 0o777) !== 0o755) return;
  const names = await readdir(mountPoint);
  if (names.some((n) => n !== 'lost+found')) return;
  await chmod(mountPoint, 0o777);
}

/**
 * sync -f (syncfs): flushes the filesystem mounted at `mountPoint`, e.g. before copying its
 * device. Nothing mounted there (a staging record whose mount a reboot removed): nothing to flush.
 */
export async function syncFilesystem(mountPoint: string): Promise<void> {
  if (await isMountPoint(mountPoint)) await run('sync', ['-f', '--', mountPoint]);
}
