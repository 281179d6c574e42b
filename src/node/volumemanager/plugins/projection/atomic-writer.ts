import {
  chmod,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  readlink,
  rename,
  symlink,
  unlink,
  writeFile,
} from 'node:fs/promises';
import path from 'node:path';
import { removeTreeSafely } from '../../operations/safe-remove.js';
import type { PayloadFile } from '../../types.js';
import { PayloadError, validPayloadPath } from './payload.js';

/** The link a reader follows: always points at one complete timestamped directory. */
export const DATA_LINK = '..data';
const DATA_TMP = '..data_tmp';

const missing = (e: unknown): boolean => (e as NodeJS.ErrnoException).code === 'ENOENT';

/** `..2006_01_02_15_04_05.` prefix of the kubelet's timestamped directories (UTC). */
function tsPrefix(now: Date): string {
  const p = (n: number, w = 2): string => String(n).padStart(w, '0');
  return `..${now.getUTCFullYear()}_${p(now.getUTCMonth() + 1)}_${p(now.getUTCDate())}_${p(now.getUTCHours())}_${p(now.getUTCMinutes())}_${p(now.getUTCSeconds())}.`;
}

async function filesUnder(root: string, rel = ''): Promise<Map<string, { mode: number; data: Buffer }>> {
  const out = new Map<string, { mode: number; data: Buffer }>();
  for (const name of await readdir(path.join(root, rel))) {
    const r = rel ? `${rel}/${name}` : name;
    const st = await lstat(path.join(root, r));
    if (st.isDirectory()) for (const [k, v] of await filesUnder(root, r)) out.set(k, v);
    else if (st.isFile()) out.set(r, { mode: st.mode & 0o7777, data: await readFile(path.join(root, r)) });
  }
  return out;
}

async function sameContent(dir: string, files: readonly PayloadFile[]): Promise<boolean> {
  let have;
  try {
    have = await filesUnder(dir);
  } catch (e) {
    if (missing(e)) return false;
    throw e;
  }
  return (
    have.size === files.length &&
    files.every((f) => {
      const h = have.get(f.path);
      return h !== undefined && h.mode === f.mode && h.data.equals(f.data);
    })
  );
}

const topLevel = (p: string): string => p.split('/')[0]!;

/**
 * The kubelet's atomic writer (pkg/volume/util/atomic_writer.go): the payload goes into a fresh
 * `..<timestamp>` directory, `..data` is switched to it with one rename, each top-level path is a
 * symlink through `..data`, then the previous timestamp directory (and leftovers of an interrupted
 * write) are removed. A reader sees the old set of files or the new one, never a mix. Idempotent:
 * an unchanged payload writes nothing. Returns whether a new version was written.
 */
export async function writePayloadAtomically(
  dir: string,
  files: readonly PayloadFile[],
  now: Date = new Date(),
): Promise<boolean> {
  for (const f of files) {
    const bad = validPayloadPath(f.path);
    if (bad) throw new PayloadError(bad);
  }
  await mkdir(dir, { recursive: true });
  const current = await readlink(path.join(dir, DATA_LINK)).catch((e: unknown) => {
    if (missing(e)) return undefined;
    throw e;
  });
  let live = current;
  const changed = current === undefined || !(await sameContent(path.join(dir, current), files));
  if (changed) {
    const ts = await mkdtemp(path.join(dir, tsPrefix(now)));
    await chmod(ts, 0o755);
    for (const f of files) {
      const file = path.join(ts, f.path);
      await mkdir(path.dirname(file), { recursive: true, mode: 0o755 });
      await writeFile(file, f.data);
      await chmod(file, f.mode); // the exact mode, whatever the umask
    }
    live = path.basename(ts);
    await unlink(path.join(dir, DATA_TMP)).catch((e: unknown) => {
      if (!missing(e)) throw e;
    });
    await symlink(live, path.join(dir, DATA_TMP));
    await rename(path.join(dir, DATA_TMP), path.join(dir, DATA_LINK)); // the one atomic switch
  }
  const wanted = new Set(files.map((f) => topLevel(f.path)));
  for (const top of wanted) {
    const st = await lstat(path.join(dir, top)).catch(() => undefined);
    if (!st) await symlink(path.join(DATA_LINK, top), path.join(dir, top));
  }
  // Paths the payload no longer has, the previous version and anything an interrupted write left.
  for (const name of await readdir(dir)) {
    const p = path.join(dir, name);
    if (name === DATA_LINK || name === live || wanted.has(name)) continue;
    if (name.startsWith('..')) await removeTreeSafely(p);
    else if ((await lstat(p)).isSymbolicLink()) await unlink(p);
  }
  return changed;
}
