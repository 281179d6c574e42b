import { chownSync, lstatSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { applyFsGroup } from './fsgroup.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe.skipIf(process.getuid?.() !== 0)('applyFsGroup (root: chown)', () => {
  it('sets the group, group rw and setgid dirs; leaves symlink targets alone; OnRootMismatch skips a matching root, Always does not', async () => {
    const d = mkdtempSync(path.join(tmpdir(), 'vm-fsgroup-'));
    dirs.push(d);
    mkdirSync(path.join(d, 'sub'));
    writeFileSync(path.join(d, 'sub', 'f'), 'x', { mode: 0o600 });
    writeFileSync(path.join(d, 'outside'), 'x', { mode: 0o600 });
    const vol = path.join(d, 'sub');
    symlinkSync(path.join(d, 'outside'), path.join(vol, 'link'));
    await applyFsGroup(vol, 4321, { policy: 'OnRootMismatch' });
    expect(lstatSync(vol).gid).toBe(4321);
    expect(lstatSync(vol).mode & 0o2070).toBe(0o2070);
    expect(lstatSync(path.join(vol, 'f')).gid).toBe(4321);
    expect(lstatSync(path.join(vol, 'f')).mode & 0o060).toBe(0o060);
    expect(lstatSync(path.join(d, 'outside')).gid).not.toBe(4321);
    // OnRootMismatch: a file changed later is not revisited while the root matches.
    writeFileSync(path.join(vol, 'late'), 'x');
    chownSync(path.join(vol, 'late'), 0, 0); // (the setgid directory would otherwise hand it the group)
    await applyFsGroup(vol, 4321, { policy: 'OnRootMismatch' });
    expect(lstatSync(path.join(vol, 'late')).gid).not.toBe(4321);
    await applyFsGroup(vol, 4321);
    expect(lstatSync(path.join(vol, 'late')).gid).toBe(4321);
  });

  it('a read-only volume gets group read, not write', async () => {
    const d = mkdtempSync(path.join(tmpdir(), 'vm-fsgroup-'));
    dirs.push(d);
    writeFileSync(path.join(d, 'key'), 'v', { mode: 0o600 });
    await applyFsGroup(d, 4321, { readOnly: true });
    expect(lstatSync(path.join(d, 'key')).mode & 0o070).toBe(0o040);
    expect(lstatSync(d).mode & 0o2070).toBe(0o2050);
  });
});
