import { mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * `mkdir -p` that fails fast. Node's own recursive mkdirSync spins forever under /proc, where
 * mkdir answers ENOENT for a parent that exists; this one walks up at most once per level.
 */
export function ensureDir(path: string, mode = 0o755): void {
  try {
    if (statSync(path).isDirectory()) return;
    const e = new Error(`ENOTDIR: not a directory, mkdir '${path}'`) as NodeJS.ErrnoException;
    e.code = 'ENOTDIR';
    throw e;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  const parent = dirname(path);
  if (parent !== path) ensureDir(parent, mode);
  try {
    mkdirSync(path, { mode });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
}
