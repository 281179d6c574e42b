import { mkdir, mkdtemp, open, readFile, rm, stat, truncate, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MountError } from './exec.js';
import { attachLoop, detachLoop, findLoopByBackingFile, isLoopAttached } from './loop.js';
import { bindMount, cleanupMountPoint, isReadOnlyMount, mount, unmount } from './mount.js';
import { isMountPoint, mountsUnder } from './mountinfo.js';

const notRoot = process.getuid?.() !== 0;
// Mounting and loop devices need CAP_SYS_ADMIN; these tests skip when not root.
describe.skipIf(notRoot)('mount utilities (root: real mounts)', () => {
  let dir = '';
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'stowage-mount-'));
  });
  afterAll(async () => {
    for (const m of await mountsUnder(dir)) await unmount(m.mountPoint);
    expect(await mountsUnder(dir)).toEqual([]);
    await rm(dir, { recursive: true, force: true });
  });

  it('tmpfs mount is a mount point; its parent and a plain dir are not; unmount is idempotent', async () => {
    const t = path.join(dir, 'tmpfs with space');
    await mkdir(t);
    expect(await isMountPoint(t)).toBe(false);
    await mount('tmpfs', t, 'tmpfs', ['size=1m']);
    expect(await isMountPoint(t)).toBe(true);
    expect(await isMountPoint(dir)).toBe(false);
    expect(await isMountPoint(path.join(dir, 'does-not-exist'))).toBe(false);
    expect(await isMountPoint(path.join(t, '..', 'tmpfs with space'))).toBe(true);
    expect((await mountsUnder(dir)).map((m) => m.mountPoint)).toEqual([t]);
    await unmount(t);
    expect(await isMountPoint(t)).toBe(false);
    await unmount(t);
    await unmount(path.join(dir, 'does-not-exist'));
  });

  it('bind mount of a directory on the same filesystem is detected (same st_dev)', async () => {
    const src = path.join(dir, 'src');
    const dst = path.join(dir, 'dst');
    await mkdir(src);
    await mkdir(dst);
    await writeFile(path.join(src, 'f'), 'hello');
    await bindMount(src, dst);
    try {
      expect((await stat(src)).dev).toBe((await stat(dst)).dev);
      expect(await isMountPoint(dst)).toBe(true);
      expect(await readFile(path.join(dst, 'f'), 'utf8')).toBe('hello');
      expect(await isReadOnlyMount(dst)).toBe(false);
    } finally {
      await unmount(dst);
    }
    expect(await isMountPoint(dst)).toBe(false);
  });

  it('read-only bind mount refuses writes with EROFS; the source stays writable', async () => {
    const src = path.join(dir, 'rosrc');
    const dst = path.join(dir, 'rodst');
    await mkdir(src);
    await mkdir(dst);
    await bindMount(src, dst, { readOnly: true });
    try {
      expect(await isReadOnlyMount(dst)).toBe(true);
      await expect(writeFile(path.join(dst, 'x'), 'no')).rejects.toMatchObject({ code: 'EROFS' });
      await writeFile(path.join(src, 'y'), 'yes');
      expect(await readFile(path.join(dst, 'y'), 'utf8')).toBe('yes');
    } finally {
      await unmount(dst);
    }
  });

  it('cleanupMountPoint unmounts stacked binds and removes the target; refuses non-empty dirs', async () => {
    const src = path.join(dir, 'cl-src');
    const dst = path.join(dir, 'cl-dst');
    await mkdir(src);
    await mkdir(dst);
    await writeFile(path.join(src, 'keep'), 'data');
    await bindMount(src, dst);
    await bindMount(src, dst);
    expect((await mountsUnder(dst)).length).toBe(2);
    await cleanupMountPoint(dst);
    await expect(stat(dst)).rejects.toMatchObject({ code: 'ENOENT' });
    await cleanupMountPoint(dst);
    await expect(cleanupMountPoint(src)).rejects.toMatchObject({ code: 'ENOTEMPTY' });
    expect(await readFile(path.join(src, 'keep'), 'utf8')).toBe('data');
  });

  it('a failing mount raises MountError naming the command, exit code and stderr', async () => {
    const err = await mount('none', path.join(dir, 'missing-target'), 'tmpfs').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MountError);
    const me = err as MountError;
    expect(me.command).toBe('mount');
    expect(me.exitCode).not.toBe(0);
    expect(me.stderr.length).toBeGreaterThan(0);
    expect(me.message).toContain('missing-target');
  });

  it('loop devices: attach, find by backing file, attach again reuses, bind the device node, detach idempotently', async () => {
    const file = path.join(dir, 'disk.img');
    await writeFile(file, '');
    await truncate(file, 4 * 1024 * 1024);
    const dev = await attachLoop(file);
    try {
      expect(dev).toMatch(/^\/dev\/loop\d+$/);
      expect(await findLoopByBackingFile(file)).toEqual([dev]);
      expect(await attachLoop(file)).toBe(dev);
      const node = path.join(dir, 'blockdev');
      await writeFile(node, '');
      await bindMount(dev, node);
      try {
        expect((await stat(node)).isBlockDevice()).toBe(true);
      } finally {
        await unmount(node);
      }
    } finally {
      await detachLoop(dev);
    }
    expect(await isLoopAttached(dev)).toBe(false);
    expect(await findLoopByBackingFile(file)).toEqual([]);
    await detachLoop(dev);
  });

  it('a read-only loop device is separate from the read-write one and refuses writes', async () => {
    const file = path.join(dir, 'ro.img');
    await writeFile(file, '');
    await truncate(file, 4 * 1024 * 1024);
    const rw = await attachLoop(file);
    const ro = await attachLoop(file, { readOnly: true });
    try {
      expect(ro).not.toBe(rw);
      expect(await attachLoop(file, { readOnly: true })).toBe(ro);
      expect(await findLoopByBackingFile(file, { readOnly: true })).toEqual([ro]);
      expect(await findLoopByBackingFile(file, { readOnly: false })).toEqual([rw]);
      // The kernel may refuse the open (EROFS/EACCES) or, on newer kernels, the write (EPERM).
      const err = await (async () => {
        const fh = await open(ro, 'r+');
        try {
          await fh.write(Buffer.from('x'), 0, 1, 0);
          return undefined;
        } finally {
          await fh.close();
        }
      })().catch((e: NodeJS.ErrnoException) => e.code);
      expect(['EROFS', 'EACCES', 'EPERM']).toContain(err);
    } finally {
      await detachLoop(ro);
      await detachLoop(rw);
    }
    expect(await findLoopByBackingFile(file)).toEqual([]);
  });
});
