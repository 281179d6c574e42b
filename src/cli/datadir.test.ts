import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { prepareDataDir } from './datadir.js';

describe('prepareDataDir', () => {
  const dirs: string[] = [];
  const tmp = (): string => {
    const d = mkdtempSync(join(tmpdir(), 'stowage-datadir-'));
    dirs.push(d);
    return d;
  };
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('undo removes a data dir it created, with the parents it created', async () => {
    const base = tmp();
    const d = await prepareDataDir(join(base, 'a', 'b', 'data'));
    writeFileSync(join(d.path, 'stowage.db'), '');
    await d.undo();
    expect(readdirSync(base)).toEqual([]);
  });

  it('undo removes only what was added to a data dir that existed', async () => {
    const existing = join(tmp(), 'data');
    mkdirSync(join(existing, 'pki'), { recursive: true });
    writeFileSync(join(existing, 'stowage.db'), 'old');
    const d = await prepareDataDir(existing);
    writeFileSync(join(existing, 'kubeconfig'), '');
    mkdirSync(join(existing, 'node'));
    writeFileSync(join(existing, 'pki', 'ca.crt'), '');
    await d.undo();
    expect(readdirSync(existing).sort()).toEqual(['pki', 'stowage.db']);
    // Inside an entry that existed, nothing is touched.
    expect(existsSync(join(existing, 'pki', 'ca.crt'))).toBe(true);
  });

  it('refuses a path under a file with one line, creating nothing', async () => {
    const base = tmp();
    writeFileSync(join(base, 'f'), '');
    await expect(prepareDataDir(join(base, 'f', 'data'))).rejects.toThrow(/^data dir .* is not writable: ENOTDIR$/);
    expect(readdirSync(base)).toEqual(['f']);
  });
});
