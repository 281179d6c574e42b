import { readFile, realpath } from 'node:fs/promises';
import path from 'node:path';

/** One line of /proc/<pid>/mountinfo (proc(5)); paths and sources have their octal escapes decoded. */
export interface MountInfoEntry {
  readonly id: number;
  readonly parentId: number;
  /** "major:minor" of the filesystem's device. */
  readonly device: string;
  /** The directory of the filesystem that forms the root of this mount (a bind mount's source). */
  readonly root: string;
  readonly mountPoint: string;
  /** Per-mount options, e.g. ["rw","relatime"] or ["ro","nosuid"]. */
  readonly mountOptions: readonly string[];
  /** Optional fields such as "shared:1" or "master:2". */
  readonly optionalFields: readonly string[];
  readonly fsType: string;
  readonly source: string;
  readonly superOptions: readonly string[];
}

/** Decodes the kernel's octal escapes (`\040` space, `\011` tab, `\012` newline, `\134` backslash). */
export function unescapeMountField(s: string): string {
  if (!s.includes('\\')) return s;
  return s.replace(/\\([0-7]{3})/g, (_m, oct: string) => String.fromCharCode(parseInt(oct, 8)));
}

/** Parses mountinfo text; throws on a malformed line rather than guessing. */
export function parseMountInfo(text: string): MountInfoEntry[] {
  const out: MountInfoEntry[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const f = line.split(' ');
    const sep = f.indexOf('-', 6);
    if (f.length < 10 || sep < 0 || f.length < sep + 4) throw new Error(`malformed mountinfo line: ${line}`);
    out.push({
      id: Number(f[0]),
      parentId: Number(f[1]),
      device: f[2]!,
      root: unescapeMountField(f[3]!),
      mountPoint: unescapeMountField(f[4]!),
      mountOptions: f[5]!.split(','),
      optionalFields: f.slice(6, sep),
      fsType: unescapeMountField(f[sep + 1]!),
      source: unescapeMountField(f[sep + 2]!),
      superOptions: f
        .slice(sep + 3)
        .join(' ')
        .split(','),
    });
  }
  return out;
}

export const MOUNTINFO_PATH = '/proc/self/mountinfo';

/** Reads and parses this process's mount table. */
export function readMountInfo(file: string = MOUNTINFO_PATH): Promise<MountInfoEntry[]> {
  if (file !== MOUNTINFO_PATH) return readFile(file, 'utf8').then(parseMountInfo);
  // Group read: callers arriving while a read is in flight share the next read, which starts
  // after their call — never a stale table — so a node with thousands of mounts and many
  // concurrent operations reads (and the kernel renders) the table once per round, not per call.
  if (nextRead) return nextRead;
  const next = currentRead
    .catch(() => undefined)
    .then(() => {
      nextRead = undefined;
      return readFile(MOUNTINFO_PATH, 'utf8').then(parseMountInfo);
    });
  nextRead = next;
  currentRead = next;
  return next;
}

let currentRead: Promise<unknown> = Promise.resolve();
let nextRead: Promise<MountInfoEntry[]> | undefined;

/** realpath, or the normalised absolute path when it does not exist (or cannot be resolved). */
async function resolvePath(p: string): Promise<string> {
  try {
    return await realpath(p);
  } catch {
    return path.resolve(p);
  }
}

/**
 * The topmost mount whose mount point is exactly `p` (after resolving symlinks), or undefined.
 * By mountinfo, not by comparing device numbers: a bind mount of a directory of the same
 * filesystem has the same st_dev as its parent and would be missed.
 */
export async function findMount(p: string, entries?: readonly MountInfoEntry[]): Promise<MountInfoEntry | undefined> {
  let target: string;
  try {
    target = await realpath(p);
  } catch (e) {
    // Nothing can be mounted on a path that does not exist (a mount point cannot be removed while
    // mounted), so the common "is the new target mounted yet?" needs no read of the mount table.
    if ((e as NodeJS.ErrnoException).code === 'ENOENT' && !entries) return undefined;
    target = path.resolve(p);
  }
  const all = entries ?? (await readMountInfo());
  let found: MountInfoEntry | undefined;
  // Later lines are mounted on top of earlier ones at the same point.
  for (const e of all) if (e.mountPoint === target) found = e;
  return found;
}

/** True when something is mounted exactly at `p`. False when `p` does not exist. */
export async function isMountPoint(p: string): Promise<boolean> {
  return (await findMount(p)) !== undefined;
}

/** Every mount at or below `dir` (resolved), deepest first so they can be unmounted in order. */
export async function mountsUnder(dir: string, entries?: readonly MountInfoEntry[]): Promise<MountInfoEntry[]> {
  const base = await resolvePath(dir);
  const prefix = base.endsWith('/') ? base : base + '/';
  const all = entries ?? (await readMountInfo());
  return all
    .filter((e) => e.mountPoint === base || e.mountPoint.startsWith(prefix))
    .map((e, i) => ({ e, i }))
    .sort((a, b) => b.e.mountPoint.length - a.e.mountPoint.length || b.i - a.i)
    .map(({ e }) => e);
}

/** Every mount whose source is `source` (e.g. a loop device: where its filesystem is mounted). */
export async function mountsOfSource(source: string, entries?: readonly MountInfoEntry[]): Promise<MountInfoEntry[]> {
  const all = entries ?? (await readMountInfo());
  return all.filter((e) => e.source === source);
}
