/**
 * Filesystem volumes of the hostpath CSI driver: a mount capability with an fs_type gets a real
 * filesystem on a loop device, so statfs shows the volume's size and online expansion grows it.
 * Needs root (loop devices, mkfs, mounts). Everything lives under one temp dir, checked clean.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, stat, statfs, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHostpathDriver, type RunningHostpathDriver } from '../src/csi/hostpath/server.js';
import { mountsUnder } from '../src/mount/mountinfo.js';
import {
  call,
  connect,
  expectCode,
  MiB,
  mountCap,
  quietLogger,
  removeAndExpectNothingLeft,
  type Clients,
} from './csi-hostpath-kit.js';
import type { VolumeCapability } from '../src/csi/proto/types.js';

const NODE = 'node-fs';
const notRoot = process.getuid?.() !== 0;
if (notRoot) console.warn('hostpath filesystem-volume tests skipped: they need root (loop devices, mkfs, mount)');

const onPath = (program: string): boolean =>
  [...(process.env.PATH ?? '').split(':'), '/usr/sbin', '/sbin'].some(
    (d) => d !== '' && existsSync(path.join(d, program)),
  );
/** ext2/3/4 online resize (EXT4_IOC_RESIZE_FS) needs CAP_SYS_RESOURCE (bit 24), which sandboxes may drop. */
const hasCapSysResource = ((): boolean => {
  const m = /^CapEff:\s*([0-9a-f]+)$/m.exec(readFileSync('/proc/self/status', 'utf8'));
  return m ? ((BigInt(`0x${m[1]}`) >> 24n) & 1n) === 1n : false;
})();
/** Each filesystem at a size it accepts (mkfs.xfs wants ≥ 300 MiB); files are sparse, so size is cheap. */
const FILESYSTEMS = [
  { fsType: 'ext4', bytes: 64 * MiB, tools: ['mkfs.ext4', 'resize2fs'], growsOnline: hasCapSysResource },
  { fsType: 'xfs', bytes: 512 * MiB, tools: ['mkfs.xfs', 'xfs_growfs'], growsOnline: true },
].map((f) => ({ ...f, installed: f.tools.every(onPath) }));
/** A filesystem that grows online here, for the tests that need one. */
const ONLINE = FILESYSTEMS.find((f) => f.installed && f.growsOnline);
for (const f of FILESYSTEMS)
  if (!f.installed) console.warn(`hostpath ${f.fsType} volume tests skipped: ${f.tools.join(' and ')} needed`);
if (!hasCapSysResource)
  console.warn('no CAP_SYS_RESOURCE: ext4 expansion is checked as refused online and done at the next staging');

const sh = async (cmd: string, ...args: string[]): Promise<string> => (await promisify(execFile)(cmd, args)).stdout;
const fsCap = (fsType = 'ext4', mountFlags: string[] = []): VolumeCapability => ({
  mount: { fsType, mountFlags },
  accessMode: { mode: 'SINGLE_NODE_WRITER' },
});
const totalBytes = async (p: string): Promise<number> => {
  const s = await statfs(p);
  return s.blocks * s.bsize;
};

describe.skipIf(notRoot)('hostpath CSI driver: filesystem volumes (root)', () => {
  let tmp = '';
  let ac: AbortController;
  let running: RunningHostpathDriver;
  let c: Clients;
  let seq = 0;

  beforeAll(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'stowage-csi-hostpath-fs-'));
    ac = new AbortController();
    running = await startHostpathDriver({
      endpoint: `unix://${tmp}/csi.sock`,
      nodeId: NODE,
      stateDir: path.join(tmp, 'state'),
      signal: ac.signal,
      logger: quietLogger(),
    });
    c = connect(path.join(tmp, 'csi.sock'));
  });

  afterAll(async () => {
    c?.close();
    ac?.abort();
    await running?.done;
    await removeAndExpectNothingLeft(tmp);
  });

  const file = (id: string): string => path.join(tmp, 'state', 'volumes', id);
  const create = async (name: string, bytes: number, cap = fsCap(), extra: object = {}) =>
    (
      await call(c.controller, 'CreateVolume', {
        name,
        capacityRange: { requiredBytes: bytes },
        volumeCapabilities: [cap],
        ...extra,
      })
    ).volume;
  const stage = async (volumeId: string, cap = fsCap()) => {
    const staging = path.join(tmp, 'staging', volumeId);
    await mkdir(staging, { recursive: true });
    await call(c.node, 'NodeStageVolume', { volumeId, stagingTargetPath: staging, volumeCapability: cap });
    return staging;
  };
  const publish = async (volumeId: string, staging: string, cap = fsCap()) => {
    const target = path.join(tmp, 'pods', `pod-${++seq}`, 'vol');
    await mkdir(path.dirname(target), { recursive: true });
    await call(c.node, 'NodePublishVolume', {
      volumeId,
      stagingTargetPath: staging,
      targetPath: target,
      volumeCapability: cap,
      readonly: false,
    });
    return target;
  };
  const unstage = (volumeId: string, staging: string) =>
    call(c.node, 'NodeUnstageVolume', { volumeId, stagingTargetPath: staging });
  const loopsOf = async (id: string): Promise<string> => (await sh('losetup', '-j', file(id))).trim();

  it.each(FILESYSTEMS)(
    '$fsType: create → stage → publish → statfs ≈ capacity → expand → statfs grows → tear down → delete',
    async (f) => {
      if (!f.installed) return; // warned above
      const cap0 = f.bytes;
      const cap = fsCap(f.fsType);
      const vol = await create(`fs-cycle-${f.fsType}`, cap0, cap);
      expect(vol.capacityBytes).toBe(cap0);
      expect((await stat(file(vol.volumeId))).isFile()).toBe(true);
      expect(await loopsOf(vol.volumeId)).toBe('');

      const staging = await stage(vol.volumeId, cap);
      // Idempotent: the same stage again is OK and mounts nothing more.
      await call(c.node, 'NodeStageVolume', {
        volumeId: vol.volumeId,
        stagingTargetPath: staging,
        volumeCapability: cap,
      });
      expect((await mountsUnder(staging)).map((m) => m.fsType)).toEqual([f.fsType]);
      let target = await publish(vol.volumeId, staging, cap);
      // A non-root workload can write to the fresh filesystem's root.
      expect((await stat(target)).mode & 0o777).toBe(0o777);
      await writeFile(path.join(target, 'hello.txt'), 'hello');

      const before = await totalBytes(target);
      expect(before).toBeGreaterThan(0.8 * cap0);
      expect(before).toBeLessThanOrEqual(cap0);

      // NodeGetVolumeStats reports this filesystem's own numbers.
      const st = await call(c.node, 'NodeGetVolumeStats', { volumeId: vol.volumeId, volumePath: target });
      const s = await statfs(target);
      const bytes = st.usage.find((u: any) => u.unit === 'BYTES');
      const inodes = st.usage.find((u: any) => u.unit === 'INODES');
      expect(Number(bytes.total)).toBe(s.blocks * s.bsize);
      expect(Number(bytes.available)).toBe(s.bavail * s.bsize);
      expect(Number(bytes.used)).toBe((s.blocks - s.bfree) * s.bsize);
      expect(Number(inodes.total)).toBe(s.files);
      expect(Number(inodes.available)).toBe(s.ffree);
      expect(Number(inodes.used)).toBe(s.files - s.ffree);

      const exp = await call(c.controller, 'ControllerExpandVolume', {
        volumeId: vol.volumeId,
        capacityRange: { requiredBytes: 2 * cap0 },
        volumeCapability: cap,
      });
      expect(exp).toMatchObject({ capacityBytes: 2 * cap0, nodeExpansionRequired: true });
      expect((await stat(file(vol.volumeId))).size).toBe(2 * cap0);
      // Only the file grew so far: the mounted filesystem has not.
      expect(await totalBytes(target)).toBe(before);
      const nodeExpand = () =>
        call(c.node, 'NodeExpandVolume', {
          volumeId: vol.volumeId,
          volumePath: target,
          stagingTargetPath: staging,
          capacityRange: { requiredBytes: 2 * cap0 },
          volumeCapability: cap,
        });
      if (f.growsOnline) {
        expect((await nodeExpand()).capacityBytes).toBe(2 * cap0);
      } else {
        // The kernel refuses the online resize: said clearly, and done offline at the next staging.
        const err = await expectCode(nodeExpand(), status.FAILED_PRECONDITION);
        expect(err.details).toContain('CAP_SYS_RESOURCE');
        await call(c.node, 'NodeUnpublishVolume', { volumeId: vol.volumeId, targetPath: target });
        await unstage(vol.volumeId, staging);
        await stage(vol.volumeId, cap);
        target = await publish(vol.volumeId, staging, cap);
      }
      const after = await totalBytes(target);
      expect(after).toBeGreaterThan(cap0);
      expect(after).toBeLessThanOrEqual(2 * cap0);
      expect(await readFile(path.join(target, 'hello.txt'), 'utf8')).toBe('hello');

      // In use → DeleteVolume refuses.
      await expectCode(call(c.controller, 'DeleteVolume', { volumeId: vol.volumeId }), status.FAILED_PRECONDITION);

      await call(c.node, 'NodeUnpublishVolume', { volumeId: vol.volumeId, targetPath: target });
      await unstage(vol.volumeId, staging);
      expect(await mountsUnder(tmp)).toEqual([]);
      expect(await loopsOf(vol.volumeId)).toBe('');
      await call(c.controller, 'DeleteVolume', { volumeId: vol.volumeId });
      await expect(stat(file(vol.volumeId))).rejects.toMatchObject({ code: 'ENOENT' });
    },
  );

  it('an unsupported fs_type is INVALID_ARGUMENT naming the field; Validate does not confirm it', async () => {
    const err = await expectCode(create('fs-bad', 16 * MiB, fsCap('nosuchfs')), status.INVALID_ARGUMENT);
    expect(err.details).toContain('volume_capabilities[0].mount.fs_type');
    const mixed = await expectCode(
      call(c.controller, 'CreateVolume', { name: 'fs-mixed', volumeCapabilities: [fsCap('ext4'), fsCap('ext3')] }),
      status.INVALID_ARGUMENT,
    );
    expect(mixed.details).toContain('fs_type');

    const vol = await create('fs-validate', 16 * MiB);
    const validate = (cap: VolumeCapability) =>
      call(c.controller, 'ValidateVolumeCapabilities', { volumeId: vol.volumeId, volumeCapabilities: [cap] });
    expect((await validate(fsCap('ext4'))).confirmed).toBeTruthy();
    expect((await validate(fsCap(''))).confirmed).toBeTruthy();
    const bad = await validate(fsCap('nosuchfs'));
    expect(bad.confirmed).toBeFalsy();
    expect(bad.message).toContain('fs_type');
    expect((await validate(fsCap('ext3'))).confirmed).toBeFalsy();
    // A directory volume is no ext4 filesystem.
    const dir = await create('fs-validate-dir', 16 * MiB, mountCap());
    const r = await call(c.controller, 'ValidateVolumeCapabilities', {
      volumeId: dir.volumeId,
      volumeCapabilities: [fsCap('ext4')],
    });
    expect(r.confirmed).toBeFalsy();
    // The same name asked again with another filesystem is a different volume.
    await expectCode(create('fs-validate', 16 * MiB, fsCap('ext3')), status.ALREADY_EXISTS);
    await expectCode(create('fs-validate', 16 * MiB, mountCap()), status.ALREADY_EXISTS);
    expect((await create('fs-validate', 16 * MiB)).volumeId).toBe(vol.volumeId);
    await call(c.controller, 'DeleteVolume', { volumeId: vol.volumeId });
    await call(c.controller, 'DeleteVolume', { volumeId: dir.volumeId });
  });

  it.skipIf(!FILESYSTEMS.find((f) => f.fsType === 'xfs')?.installed)(
    'a request below the filesystem minimum gets the minimum, unless its limit forbids',
    async () => {
      const vol = await create('fs-xfs-small', 16 * MiB, fsCap('xfs'));
      expect(vol.capacityBytes).toBe(300 * MiB);
      await expectCode(
        call(c.controller, 'CreateVolume', {
          name: 'fs-xfs-limit',
          capacityRange: { requiredBytes: 16 * MiB, limitBytes: 32 * MiB },
          volumeCapabilities: [fsCap('xfs')],
        }),
        status.OUT_OF_RANGE,
      );
      await call(c.controller, 'DeleteVolume', { volumeId: vol.volumeId });
    },
  );

  it('restaging keeps the data (never reformatted); a mismatching fs_type or a foreign filesystem is refused', async () => {
    const vol = await create('fs-restage', 32 * MiB);
    let staging = await stage(vol.volumeId);
    let target = await publish(vol.volumeId, staging);
    await writeFile(path.join(target, 'keep.txt'), 'kept');
    await call(c.node, 'NodeUnpublishVolume', { volumeId: vol.volumeId, targetPath: target });
    await unstage(vol.volumeId, staging);
    expect(await loopsOf(vol.volumeId)).toBe('');

    // The CO may omit fs_type at stage: the volume's own filesystem is used.
    staging = await stage(vol.volumeId, fsCap(''));
    target = await publish(vol.volumeId, staging, fsCap(''));
    expect(await readFile(path.join(target, 'keep.txt'), 'utf8')).toBe('kept');
    await expectCode(
      call(c.node, 'NodePublishVolume', {
        volumeId: vol.volumeId,
        stagingTargetPath: staging,
        targetPath: path.join(tmp, 'pods', 'x3'),
        volumeCapability: fsCap('ext3'),
      }),
      status.FAILED_PRECONDITION,
    );
    await call(c.node, 'NodeUnpublishVolume', { volumeId: vol.volumeId, targetPath: target });
    await unstage(vol.volumeId, staging);

    // A volume whose file already carries another filesystem is never formatted over.
    const other = await create('fs-foreign', 32 * MiB);
    await sh('mkfs.ext2', '-F', '-q', file(other.volumeId));
    await expectCode(stage(other.volumeId), status.FAILED_PRECONDITION);
    expect((await sh('blkid', '-p', '-o', 'value', '-s', 'TYPE', file(other.volumeId))).trim()).toBe('ext2');
    expect(await loopsOf(other.volumeId)).toBe('');
    expect(await mountsUnder(path.join(tmp, 'staging'))).toEqual([]);

    await call(c.controller, 'DeleteVolume', { volumeId: vol.volumeId });
    await call(c.controller, 'DeleteVolume', { volumeId: other.volumeId });
  });

  it('clone and snapshot restore keep the filesystem and its data; a bigger clone is grown when staged', async () => {
    const src = await create('fs-src', 32 * MiB);
    const staging = await stage(src.volumeId);
    await writeFile(path.join(staging, 'data.txt'), 'original');
    const srcTotal = await totalBytes(staging);
    // Copied while the source is mounted: flushed first, so the copy has the file.
    const clone = await create('fs-clone', 64 * MiB, fsCap(''), {
      volumeContentSource: { volume: { volumeId: src.volumeId } },
    });
    const snap = (await call(c.controller, 'CreateSnapshot', { name: 'fs-snap', sourceVolumeId: src.volumeId }))
      .snapshot;
    await unstage(src.volumeId, staging);
    // A clone as another filesystem is refused.
    await expectCode(
      create('fs-clone-bad', 32 * MiB, fsCap('ext3'), { volumeContentSource: { volume: { volumeId: src.volumeId } } }),
      status.INVALID_ARGUMENT,
    );
    const restored = await create('fs-restored', 32 * MiB, fsCap('ext4'), {
      volumeContentSource: { snapshot: { snapshotId: snap.snapshotId } },
    });

    // The bigger clone's filesystem grew past the whole source; the restore is the source's size.
    for (const [v, total] of [
      [clone, (t: number) => expect(t).toBeGreaterThan(32 * MiB)],
      [restored, (t: number) => expect(t).toBe(srcTotal)],
    ] as const) {
      const r = await call(c.controller, 'ValidateVolumeCapabilities', {
        volumeId: v.volumeId,
        volumeCapabilities: [fsCap('ext4')],
      });
      expect(r.confirmed).toBeTruthy();
      const st = await stage(v.volumeId);
      expect(await readFile(path.join(st, 'data.txt'), 'utf8')).toBe('original');
      total(await totalBytes(st));
      await unstage(v.volumeId, st);
      await call(c.controller, 'DeleteVolume', { volumeId: v.volumeId });
    }
    await call(c.controller, 'DeleteSnapshot', { snapshotId: snap.snapshotId });
    await call(c.controller, 'DeleteVolume', { volumeId: src.volumeId });
    expect(await mountsUnder(tmp)).toEqual([]);
  });

  it.skipIf(!ONLINE)(
    'a restarted driver finds its filesystem volumes (state keeps fsType) and expands them online',
    async () => {
      const f = ONLINE!;
      const vol = await create('fs-restart', f.bytes, fsCap(f.fsType));
      const staging = await stage(vol.volumeId, fsCap(f.fsType));
      c.close();
      ac.abort();
      await running.done;
      ac = new AbortController();
      running = await startHostpathDriver({
        endpoint: `unix://${tmp}/csi.sock`,
        nodeId: NODE,
        stateDir: path.join(tmp, 'state'),
        signal: ac.signal,
        logger: quietLogger(),
      });
      c = connect(path.join(tmp, 'csi.sock'));
      expect(running.driver.volumes[vol.volumeId]?.fsType).toBe(f.fsType);
      await call(c.controller, 'ControllerExpandVolume', {
        volumeId: vol.volumeId,
        capacityRange: { requiredBytes: 2 * f.bytes },
      });
      await call(c.node, 'NodeExpandVolume', { volumeId: vol.volumeId, volumePath: staging });
      expect(await totalBytes(staging)).toBeGreaterThan(f.bytes);
      await unstage(vol.volumeId, staging);
      expect(await loopsOf(vol.volumeId)).toBe('');
      await call(c.controller, 'DeleteVolume', { volumeId: vol.volumeId });
    },
  );
});
