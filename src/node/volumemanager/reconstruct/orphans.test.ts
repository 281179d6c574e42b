import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { bindMount, mount, unmountAll } from '../../../mount/mount.js';
import { mountsUnder } from '../../../mount/mountinfo.js';
import { newLogger } from '../../../util/log.js';
import { podVolumeDir } from '../operations/paths.js';
import { podUid } from '../types.js';
import { cleanupOrphanedPodDirs } from './orphans.js';

const notRoot = process.getuid?.() !== 0;
const log = newLogger('test');

describe.skipIf(notRoot)('orphaned pod directories (root: real tmpfs)', () => {
  const dirs: string[] = [];
  afterEach(async () => {
    for (const d of dirs.splice(0)) {
      for (const m of (await mountsUnder(d)).reverse()) await unmountAll(m.mountPoint);
      rmSync(d, { recursive: true, force: true });
    }
  });
  const root = (): string => {
    const d = mkdtempSync(path.join(tmpdir(), 'vm-orphans-'));
    dirs.push(d);
    return d;
  };

  it('unmounts the pod’s own tmpfs volumes, then removes the directory', async () => {
    const r = root();
    const uid = podUid('u1');
    for (const [plugin, name] of [
      ['kubernetes.io/empty-dir', 'cache'],
      ['kubernetes.io/secret', 'creds'],
    ] as const) {
      const dir = podVolumeDir(r, uid, plugin, name);
      mkdirSync(dir, { recursive: true });
      await mount('tmpfs', dir, 'tmpfs', ['size=1m']);
      writeFileSync(path.join(dir, 'f'), 'x');
    }
    // a subPath of a hostPath volume: nothing reconstructs it, the sweep unmounts it
    const host = path.join(r, 'host');
    mkdirSync(path.join(host, 'sub'), { recursive: true });
    const sub = path.join(r, 'pods', uid, 'volume-subpaths', 'h', 'app', '0');
    mkdirSync(sub, { recursive: true });
    await bindMount(path.join(host, 'sub'), sub);
    expect(await cleanupOrphanedPodDirs({ rootDir: r, keep: () => false, log })).toEqual([uid]);
    expect(await mountsUnder(r)).toEqual([]);
    expect(existsSync(path.join(host, 'sub'))).toBe(true);
    expect(existsSync(path.join(r, 'pods', uid))).toBe(false);
  });

  it('leaves a pod directory alone while anything else is mounted in it (never crosses a mount)', async () => {
    const r = root();
    const uid = podUid('u2');
    const outside = path.join(r, 'data');
    mkdirSync(outside);
    writeFileSync(path.join(outside, 'keep'), 'x');
    const csi = path.join(podVolumeDir(r, uid, 'kubernetes.io/csi', 'pv'), 'mount');
    mkdirSync(csi, { recursive: true });
    await bindMount(outside, csi);
    expect(await cleanupOrphanedPodDirs({ rootDir: r, keep: () => false, log })).toEqual([]);
    expect(existsSync(path.join(outside, 'keep'))).toBe(true);
  });
});
