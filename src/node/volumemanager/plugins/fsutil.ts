import { readdir } from 'node:fs/promises';

/** Entries of a directory; a missing or unreadable directory has none (reconstruction skips it). */
export async function listDir(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch {
    return [];
  }
}
