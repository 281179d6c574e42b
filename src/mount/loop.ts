import { readdir, readFile, realpath } from 'node:fs/promises';
import path from 'node:path';
import { MountError, run, type RunOptions } from './exec.js';

const SYS_BLOCK = '/sys/block';

export interface LoopDevice {
  /** e.g. /dev/loop3 */
  readonly device: string;
  /** The backing file as the kernel reports it (absolute path). */
  readonly backingFile: string;
  /** Attached with `losetup -r`: the device refuses writes. */
  readonly readOnly: boolean;
}

export interface LoopOptions extends RunOptions {
  /** Attach (or find) a read-only device: writes to it fail, whatever the mount flags say. */
  readOnly?: boolean;
}

/** Every attached loop device, from sysfs (no exec). */
export async function listLoopDevices(): Promise<LoopDevice[]> {
  let names: string[];
  try {
    names = await readdir(SYS_BLOCK);
  } catch {
    return [];
  }
  const out: LoopDevice[] = [];
  for (const n of names.filter((x) => /^loop\d+$/.test(x))) {
    try {
      const f = (await readFile(path.join(SYS_BLOCK, n, 'loop', 'backing_file'), 'utf8')).trim();
      const ro = (await readFile(path.join(SYS_BLOCK, n, 'ro'), 'utf8').catch(() => '0')).trim() === '1';
      if (f) out.push({ device: `/dev/${n}`, backingFile: f, readOnly: ro });
    } catch {
      // No loop/ directory: the device is not attached.
    }
  }
  return out;
}

/**
 * The loop devices backed by `file` (resolved with realpath), lowest number first; with
 * `readOnly` set, only devices of that mode.
 */
export async function findLoopByBackingFile(file: string, filter: { readOnly?: boolean } = {}): Promise<string[]> {
  const want = await realpath(file);
  const num = (d: string): number => Number(d.replace(/\D/g, ''));
  return (await listLoopDevices())
    .filter((l) => l.backingFile === want && (filter.readOnly === undefined || l.readOnly === filter.readOnly))
    .map((l) => l.device)
    .sort((a, b) => num(a) - num(b));
}

/**
 * Attaches `file` to a free loop device and returns its path. Idempotent: when the file already
 * backs a loop device of the same mode (read-write, or read-only with `readOnly`), that device
 * is returned instead of attaching another one.
 */
export async function attachLoop(file: string, opts: LoopOptions = {}): Promise<string> {
  const readOnly = opts.readOnly ?? false;
  const existing = await findLoopByBackingFile(file, { readOnly });
  if (existing[0]) return existing[0];
  const out = (
    await run('losetup', ['-f', '--show', ...(readOnly ? ['-r'] : []), '--', await realpath(file)], opts)
  ).trim();
  if (!/^\/dev\/loop\d+$/.test(out)) {
    throw new MountError('losetup', ['-f', '--show', file], 0, '', `unexpected output ${JSON.stringify(out)}`);
  }
  return out;
}

/** True when the loop device currently has a backing file. */
export async function isLoopAttached(device: string): Promise<boolean> {
  try {
    await readFile(path.join(SYS_BLOCK, path.basename(device), 'loop', 'backing_file'), 'utf8');
    return true;
  } catch {
    return false;
  }
}

/** Detaches a loop device. Idempotent: an unattached (or absent) device is success. */
export async function detachLoop(device: string, opts: RunOptions = {}): Promise<void> {
  if (!/^\/dev\/loop\d+$/.test(device)) throw new Error(`not a loop device path: ${device}`);
  if (!(await isLoopAttached(device))) return;
  try {
    await run('losetup', ['-d', device], opts);
  } catch (e) {
    if (!(await isLoopAttached(device))) return;
    throw e;
  }
}

/** Refreshes the loop device's size after its backing file grew (losetup -c). */
export async function refreshLoopCapacity(device: string, opts: RunOptions = {}): Promise<void> {
  await run('losetup', ['-c', device], opts);
}
