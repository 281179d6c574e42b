import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mountsUnder } from '../../../mount/mountinfo.js';
import { cleanSubPaths, mountSubPath, SubPathError, validateSubPath } from './subpath.js';

describe('validateSubPath', () => {
  it.each([
    { p: 'a/b', ok: true },
    { p: '/etc', ok: false },
    { p: 'a/../../x', ok: false },
    { p: '', ok: false },
    { p: '.', ok: false },
  ])('$p → ok=$ok', ({ p, ok }) => {
    if (ok) expect(validateSubPath(p)).toEqual(p.split('/'));
    else expect(() => validateSubPath(p)).toThrow(SubPathError);
  });
});

const notRoot = process.getuid?.() !== 0;
describe.skipIf(notRoot)('subPath mounts (root: real bind mounts)', () => {
  let dir = '';
  let vol = '';
  let subs = '';
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'vm-subpath-'));
    vol = path.join(dir, 'vol');
    subs = path.join(dir, 'pod', 'volume-subpaths', 'data');
    mkdirSync(path.join(vol, 'app', 'conf'), { recursive: true });
    writeFileSync(path.join(vol, 'app', 'conf', 'x.txt'), 'inside');
    mkdirSync(path.join(dir, 'outside'));
    writeFileSync(path.join(dir, 'outside', 'secret'), 'secret');
    symlinkSync(path.join(dir, 'outside'), path.join(vol, 'escape')); // absolute link out
    symlinkSync('../outside', path.join(vol, 'app', 'rel')); // relative link out
    symlinkSync(path.join(dir, 'outside', 'secret'), path.join(vol, 'secretlink'));
  });
  afterAll(async () => {
    await cleanSubPaths(subs);
    expect(await mountsUnder(dir)).toEqual([]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('bind-mounts a directory, a file and a new directory; read-only honoured', async () => {
    await mountSubPath({ volumeRoot: vol, subPath: 'app/conf', target: path.join(subs, 'c1', '0'), readOnly: false });
    await mountSubPath({
      volumeRoot: vol,
      subPath: 'app/conf/x.txt',
      target: path.join(subs, 'c1', '1'),
      readOnly: true,
    });
    await mountSubPath({ volumeRoot: vol, subPath: 'new/dir', target: path.join(subs, 'c2', '0'), readOnly: false });
    await mountSubPath({ volumeRoot: vol, subPath: 'app/conf', target: path.join(subs, 'c1', '0'), readOnly: false }); // idempotent
    expect(readFileSync(path.join(subs, 'c1', '0', 'x.txt'), 'utf8')).toBe('inside');
    expect(readFileSync(path.join(subs, 'c1', '1'), 'utf8')).toBe('inside');
    expect(() => writeFileSync(path.join(subs, 'c1', '1'), 'w')).toThrow(/EROFS|read-only/);
    expect(existsSync(path.join(vol, 'new', 'dir'))).toBe(true);
    expect((await mountsUnder(subs)).length).toBe(3);
  });

  it.each(['escape', 'escape/secret', 'app/rel/secret', 'secretlink'])('refuses the symlink escape %s', async (sp) => {
    await expect(
      mountSubPath({ volumeRoot: vol, subPath: sp, target: path.join(subs, 'evil', '0'), readOnly: false }),
    ).rejects.toThrow(SubPathError);
    expect(await mountsUnder(path.join(subs, 'evil'))).toEqual([]);
  });

  it('follows a symlink that stays inside the volume (configMap keys are links into ..data)', async () => {
    symlinkSync('app/conf', path.join(vol, 'inlink'));
    await mountSubPath({
      volumeRoot: vol,
      subPath: 'inlink/x.txt',
      target: path.join(subs, 'c3', '0'),
      readOnly: false,
    });
    expect(readFileSync(path.join(subs, 'c3', '0'), 'utf8')).toBe('inside');
  });

  it('cleanup unmounts and removes everything, idempotently', async () => {
    await cleanSubPaths(subs);
    await cleanSubPaths(subs);
    expect(await mountsUnder(dir)).toEqual([]);
    expect(existsSync(subs)).toBe(false);
    expect(readFileSync(path.join(vol, 'app', 'conf', 'x.txt'), 'utf8')).toBe('inside');
  });
});
