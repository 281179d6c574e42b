import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseMountInfo, readMountInfo } from './mountinfo.js';
import { makeRShared, planRShared, releaseRShared } from './shared.js';

const table = (...lines: string[]) => parseMountInfo(lines.join('\n'));
const ROOT_PRIVATE = '27 1 254:0 / / rw,relatime - ext4 /dev/vda rw';
const ROOT_SHARED = '27 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw';

describe('planRShared (the kubelet’s MakeRShared)', () => {
  it.each([
    ['nothing to do when the mount holding the dir is shared', [ROOT_SHARED], { kind: 'shared' }],
    ['a bind on itself under a private root', [ROOT_PRIVATE], { kind: 'bind' }],
    [
      'the propagation changed in place when the dir is a mount point',
      [ROOT_PRIVATE, '40 27 0:39 / /var/lib/kubelet rw - tmpfs tmpfs rw'],
      { kind: 'reshare' },
    ],
    [
      'nothing when a shared mount point is the dir itself',
      [ROOT_PRIVATE, '40 27 0:39 / /var/lib/kubelet rw shared:9 - tmpfs tmpfs rw'],
      { kind: 'shared' },
    ],
    [
      'no bind over mounts it would hide',
      [ROOT_PRIVATE, '41 27 0:40 / /var/lib/kubelet/pods/u/volumes/v rw - tmpfs tmpfs rw'],
      { kind: 'blocked', below: ['/var/lib/kubelet/pods/u/volumes/v'] },
    ],
    [
      'a sibling with a longer name does not hold the dir',
      [ROOT_PRIVATE, '40 27 0:39 / /var/lib/kubelet2 rw shared:3 - tmpfs tmpfs rw'],
      { kind: 'bind' },
    ],
  ])('%s', (_, lines, want) => {
    expect(planRShared('/var/lib/kubelet', table(...lines))).toEqual(want);
  });
});

const isRoot = process.getuid?.() === 0;

describe.skipIf(!isRoot)('makeRShared on this host', () => {
  it('makes the dir shared: a mount below it shows in a peer view; the bind is undone once nothing is below', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'stowage-rshared-'));
    const root = join(dir, 'root');
    const peer = join(dir, 'peer');
    const vol = join(root, 'pods', 'vol');
    mkdirSync(vol, { recursive: true });
    mkdirSync(peer);
    const before = planRShared(root, await readMountInfo());
    try {
      const plan = await makeRShared(root);
      expect(plan.kind).toBe(before.kind);
      if (plan.kind === 'shared') return; // this host propagates already
      // A second view of the shared mount (what a Bidirectional container mount is) sees a mount
      // made below the first.
      execFileSync('mount', ['--bind', root, peer]);
      execFileSync('mount', ['-t', 'tmpfs', 'tmpfs', vol]);
      const mounts = (await readMountInfo()).map((e) => e.mountPoint);
      expect(mounts).toContain(join(peer, 'pods', 'vol'));
      expect(await releaseRShared(root, plan)).toBe(false); // volumes still mounted: it stays
      // Started again (after a crash): the bind it left is its own to release.
      expect(await makeRShared(root)).toEqual({ kind: 'bind' });
      execFileSync('umount', [vol]);
      execFileSync('umount', [peer]);
      expect(await releaseRShared(root, plan)).toBe(true);
      expect((await readMountInfo()).filter((e) => e.mountPoint.startsWith(dir))).toEqual([]);
    } finally {
      for (const m of (await readMountInfo()).filter((e) => e.mountPoint.startsWith(dir)).reverse())
        execFileSync('umount', [m.mountPoint]);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
