import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HostPathType } from '../types.js';
import { checkHostPathType, validHostPath } from './host-path.js';

const notRoot = process.getuid?.() !== 0;

describe('hostPath type check', () => {
  let dir = '';
  let server: Server;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'vm-hostpath-'));
    mkdirSync(path.join(dir, 'd'));
    writeFileSync(path.join(dir, 'f'), 'x');
    server = createServer();
    await new Promise<void>((r) => server.listen(path.join(dir, 'sock'), r));
  });
  afterAll(async () => {
    await new Promise<void>((r) => server.close(() => r()));
    rmSync(dir, { recursive: true, force: true });
  });

  const at = (p: string): string => (p.startsWith('/') ? p : path.join(dir, p));
  it.each<{ type: HostPathType; p: string; error?: string }>([
    { type: '', p: 'missing' },
    { type: '', p: 'f' },
    { type: 'Directory', p: 'd' },
    { type: 'Directory', p: 'f', error: 'is not a directory' },
    { type: 'Directory', p: 'missing', error: 'is not a directory' },
    { type: 'DirectoryOrCreate', p: 'd' },
    { type: 'DirectoryOrCreate', p: 'f', error: 'is not a directory' },
    { type: 'File', p: 'f' },
    { type: 'File', p: 'd', error: 'is not a file' },
    { type: 'FileOrCreate', p: 'f' },
    { type: 'FileOrCreate', p: 'd', error: 'is not a file' },
    { type: 'FileOrCreate', p: 'nodir/new', error: 'ENOENT' },
    { type: 'Socket', p: 'sock' },
    { type: 'Socket', p: 'f', error: 'is not a socket file' },
    { type: 'CharDevice', p: '/dev/null' },
    { type: 'CharDevice', p: 'f', error: 'is not a character device' },
    { type: 'BlockDevice', p: 'd', error: 'is not a block device' },
    { type: 'BlockDevice', p: '/dev/null', error: 'is not a block device' },
  ])('$type on $p → $error', async ({ type, p, error }) => {
    const check = checkHostPathType(at(p), type);
    if (!error) await check;
    else if (error === 'ENOENT') await expect(check).rejects.toThrow(/ENOENT/);
    else await expect(check).rejects.toThrow(`hostPath type check failed: ${at(p)} ${error}`);
  });

  it.skipIf(notRoot || !existsSync('/dev/loop0'))('BlockDevice on a block device passes', async () => {
    await checkHostPathType('/dev/loop0', 'BlockDevice');
  });

  it('DirectoryOrCreate makes the directory and its parents 0755; FileOrCreate an empty 0644 file', async () => {
    await checkHostPathType(at('new/a/b'), 'DirectoryOrCreate');
    expect(statSync(at('new/a/b')).mode & 0o777).toBe(0o755);
    expect(statSync(at('new/a')).isDirectory()).toBe(true);
    await checkHostPathType(at('new/file'), 'FileOrCreate');
    expect(statSync(at('new/file')).size).toBe(0);
    expect(statSync(at('new/file')).mode & 0o777).toBe(0o644 & ~process.umask());
  });

  it.each([
    { p: '/srv/data', ok: true },
    { p: 'srv', ok: false },
    { p: '/srv/../etc', ok: false },
  ])('path $p valid=$ok', ({ p, ok }) => expect(validHostPath(p) === undefined).toBe(ok));
});
