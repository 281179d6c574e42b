/**
 * The data dir of `stowage up`, prepared so that a start that fails leaves the disk as it found it:
 * a data dir this start created (with any parents it created) is removed; in a data dir that
 * existed, only the entries this start added are removed. Nothing is removed across a mount point.
 */
import { accessSync, constants, existsSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { mountsUnder } from '../mount/index.js';
import { ensureDir } from '../util/fsutil.js';
import { CliError } from './errors.js';

export interface PreparedDataDir {
  readonly path: string;
  /** Removes what this start created; safe to call more than once. */
  undo(): Promise<void>;
}

/** Creates (if needed) and checks `path`; throws a CliError after undoing its own creation. */
export async function prepareDataDir(path: string): Promise<PreparedDataDir> {
  const createdRoot = topmostMissing(path);
  const before = createdRoot === undefined ? new Set(safeList(path)) : undefined;
  let undone = false;
  const undo = async (): Promise<void> => {
    if (undone) return;
    undone = true;
    const targets =
      createdRoot !== undefined
        ? [createdRoot]
        : safeList(path)
            .filter((e) => !before!.has(e))
            .map((e) => join(path, e));
    for (const t of targets) {
      if (!existsSync(t)) continue;
      if ((await mountsUnder(t).catch(() => [])).length > 0) continue; // never delete across a mount point
      rmSync(t, { recursive: true, force: true });
    }
  };
  try {
    ensureDir(path, 0o700);
    accessSync(path, constants.W_OK);
  } catch (e) {
    await undo();
    throw new CliError(
      `data dir ${path} is not writable: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    );
  }
  return { path, undo };
}

/** The highest ancestor of `path` (or `path` itself) that does not exist yet; undefined when `path` exists. */
function topmostMissing(path: string): string | undefined {
  let missing: string | undefined;
  for (let p = path; !existsSync(p); p = dirname(p)) {
    missing = p;
    if (dirname(p) === p) break;
  }
  return missing;
}

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
