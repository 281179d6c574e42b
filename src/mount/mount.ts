import { lstat, rm, rmdir } from 'node:fs/promises';
import path from 'node:path';
import { MountError, run, type RunOptions } from './exec.js';
import { findMount, isMountPoint, mountsUnder } from './mountinfo.js';

export interface BindMountOptions extends RunOptions {
  readOnly?: boolean;
}

export interface UnmountOptions extends RunOptions {
  /** umount -l: detach now, clean up when no longer busy. Off by default: it hides busy mounts. */
  lazy?: boolean;
}

// Paths go after `--` so a name that starts with '-' can never be read as an option.
const abs = (p: string): string => path.resolve(p);

/** mount -t <fstype> [-o <options>] <source> <target>. */
export async function mount(
  source: string,
  target: string,
  fstype: string,
  options: readonly string[] = [],
  opts: RunOptions = {},
): Promise<void> {
  const args = ['-t', fstype];
  if (options.length > 0) args.push('-o', options.join(','));
  await run('mount', [...args, '--', source, abs(target)], opts);
}

/**
 * Bind-mounts `source` (a directory or a file, e.g. a device node) onto `target`. Read-only takes
 * a second step (remount,bind,ro): older kernels silently ignore `ro` on the initial bind. When the
 * remount fails the bind is undone, so the caller never gets a writable mount it asked to be read-only.
 */
export async function bindMount(source: string, target: string, opts: BindMountOptions = {}): Promise<void> {
  const t = abs(target);
  await run('mount', ['--bind', '--', abs(source), t], opts);
  if (!opts.readOnly) return;
  try {
    await remountReadOnly(t, opts);
  } catch (e) {
    await run('umount', ['--', t], opts).catch(() => undefined);
    throw e;
  }
}

/** Makes an existing bind mount at `target` read-only (per-mount flag, leaves the source writable). */
export async function remountReadOnly(target: string, opts: RunOptions = {}): Promise<void> {
  await run('mount', ['-o', 'remount,bind,ro', '--', abs(target)], opts);
}

/** True when the mount at `target` carries the per-mount `ro` flag; undefined when nothing is mounted. */
export async function isReadOnlyMount(target: string): Promise<boolean | undefined> {
  const m = await findMount(target);
  return m ? m.mountOptions.includes('ro') : undefined;
}

/**
 * Unmounts the topmost mount at `target`. Idempotent: nothing mounted (or no such path) is success.
 * Never lazy unless asked: a busy mount is reported, not hidden.
 */
export async function unmount(target: string, opts: UnmountOptions = {}): Promise<void> {
  const t = abs(target);
  if (!(await isMountPoint(t))) return;
  try {
    await run('umount', [...(opts.lazy ? ['-l'] : []), '--', t], opts);
  } catch (e) {
    // Lost a race with another unmount: the goal is reached.
    if (e instanceof MountError && /not mounted|no mount point specified/i.test(e.stderr)) return;
    if (!(await isMountPoint(t))) return;
    throw e;
  }
}

/** Mounts stacked at one path (a repeated bind) are each unmounted; more than this is a bug upstream. */
export const MAX_STACKED_MOUNTS = 16;

/** Unmounts every mount stacked exactly at `target` (topmost first). Idempotent. */
export async function unmountAll(target: string, opts: UnmountOptions = {}): Promise<void> {
  for (let i = 0; i < MAX_STACKED_MOUNTS && (await isMountPoint(target)); i++) await unmount(target, opts);
  if (await isMountPoint(target)) throw new Error(`${target} is still mounted after ${MAX_STACKED_MOUNTS} unmounts`);
}

/**
 * Unmounts `target` and removes it: an empty directory or a file (a block device's bind target).
 * Never deletes across a mount point or removes a non-empty directory: those fail, leaving data
 * alone. Idempotent: a missing target is success.
 */
export async function cleanupMountPoint(target: string, opts: UnmountOptions = {}): Promise<void> {
  const t = abs(target);
  await unmountAll(t, opts);
  const below = await mountsUnder(t);
  if (below.length > 0) throw new Error(`${t} still has mounts below it: ${below.map((m) => m.mountPoint).join(', ')}`);
  try {
    const st = await lstat(t);
    if (st.isDirectory()) await rmdir(t);
    else await rm(t);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
}
