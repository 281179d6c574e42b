import { mkdir, open, stat } from 'node:fs/promises';
import path from 'node:path';
import { attachLoop, detachLoop, findLoopByBackingFile, refreshLoopCapacity } from '../../mount/loop.js';
import { bindMount, cleanupMountPoint, isReadOnlyMount, mount, unmountAll } from '../../mount/mount.js';
import { findMount, isMountPoint, mountsOfSource } from '../../mount/mountinfo.js';
import type { NodeHandlers, NodeServiceCapability, VolumeUsage } from '../proto/types.js';
import { unary, type HostpathDriver } from './driver.js';
import { alreadyExists, failedPrecondition, missing, notFound } from './errors.js';
import { formatDevice, growMounted, growsOnlyMounted, growUnmounted, isFsType, openPristineRoot, probeFsType, type FsType } from './filesystem.js';
import { directoryUsage, exists, filesystemStats } from './fsops.js';
import { ensureEphemeralVolume, isEphemeralPublish, releaseEphemeralVolume } from './ephemeral.js';
import { dataLayout, type VolumeRecord } from './state.js';
import { parseCapability, unsupportedReason, type ParsedCapability } from './validate.js';

export function nodeCapabilities(): NodeServiceCapability[] {
  const types = ['STAGE_UNSTAGE_VOLUME', 'GET_VOLUME_STATS', 'EXPAND_VOLUME', 'SINGLE_NODE_MULTI_WRITER', 'VOLUME_CONDITION'] as const;
  return types.map((type) => ({ rpc: { type } }));
}

/** Same inode ⇒ the mount at `target` shows `source` (how we recognise our own bind mounts). */
async function sameFile(a: string, b: string): Promise<boolean> {
  try {
    const [x, y] = await Promise.all([stat(a), stat(b)]);
    return x.dev === y.dev && x.ino === y.ino && (!x.isBlockDevice() || x.rdev === y.rdev);
  } catch {
    return false;
  }
}

function failMissingStaging(): never {
  throw failedPrecondition('staging_target_path is required: this driver stages volumes');
}

export function nodeHandlers(d: HostpathDriver): NodeHandlers {
  const log = d.log;
  const { config } = d;

  // Spec (NodeStage/NodePublish "Exceeds capabilities"): a capability the volume does not have
  // is FAILED_PRECONDITION, whether the access type or the access mode is wrong.
  const checkUsable = (v: VolumeRecord, cap: ParsedCapability): void => {
    if (cap.kind !== v.kind) throw failedPrecondition(`volume_capability: volume ${v.id} is a ${v.kind} volume, not ${cap.kind}`);
    const why = unsupportedReason(cap);
    if (why) throw failedPrecondition(why);
    // A directory volume ignores fs_type, as it always has (a PV may name one from its class).
    if (v.fsType && cap.fsType && cap.fsType !== v.fsType) {
      throw failedPrecondition(`volume_capability.mount.fs_type: volume ${v.id} has a ${v.fsType} filesystem, not ${cap.fsType}`);
    }
  };

  const fsTypeOf = (v: VolumeRecord): FsType => {
    if (!v.fsType || !isFsType(v.fsType)) throw failedPrecondition(`volume ${v.id} has no filesystem this driver can mount (${v.fsType ?? 'none'})`);
    return v.fsType;
  };

  /**
   * What is mounted at `staging`: nothing, this volume (its directory bound there, or its
   * filesystem from its loop device), or something else.
   */
  const stagingState = async (v: VolumeRecord, staging: string): Promise<'none' | 'ours' | 'other'> => {
    const src = d.volumePath(v.id);
    // The staging path showing the volume's own directory can only be our bind mount: no need to
    // read the mount table (thousands of lines on a busy node) for the common re-check.
    if (!v.fsType && (await sameFile(staging, src))) return 'ours';
    const m = await findMount(staging);
    if (!m) return 'none';
    if (!v.fsType) return 'other';
    const loops = (await exists(src)) ? await findLoopByBackingFile(src, { readOnly: false }) : [];
    return loops.includes(m.source) ? 'ours' : 'other';
  };

  /**
   * Mounts a filesystem volume at `staging`. Each step re-checks what a crash may have left:
   * a loop device already attached is reused; a device with a filesystem is never formatted again
   * (one of another type is refused); a filesystem smaller than its device (a clone grown past
   * its source, an expansion while not staged or interrupted before NodeExpandVolume) is grown.
   */
  const mountFilesystem = async (v: VolumeRecord, staging: string, mountFlags: readonly string[]): Promise<void> => {
    const fsType = fsTypeOf(v);
    const file = d.volumePath(v.id);
    const dev = await attachLoop(file);
    try {
      await refreshLoopCapacity(dev);
      const found = await probeFsType(dev);
      if (found === undefined) {
        await formatDevice(dev, fsType);
        log.info('volume formatted', { volume: v.id, fsType, device: dev });
      } else if (found !== fsType) {
        throw failedPrecondition(`volume ${v.id} holds a ${found} filesystem, not ${fsType}; it is never reformatted`);
      }
      // Never an offline resize of a device whose filesystem is mounted elsewhere (a second staging path).
      if ((await mountsOfSource(dev)).length === 0) await growUnmounted(dev, fsType, (await stat(file)).size);
      await mkdir(staging, { recursive: true });
      await mount(dev, staging, fsType, mountFlags);
      await openPristineRoot(staging);
      if (growsOnlyMounted(fsType)) await growMounted(dev, staging, fsType);
    } catch (e) {
      // Leave no device behind that no staging record accounts for.
      await releaseUnusedLoops(v).catch((x: unknown) => log.warn('releasing loop device failed', { volume: v.id, error: String(x) }));
      throw e;
    }
  };

  /**
   * Detaches loop devices nothing needs any more: the read-write device while the volume is staged
   * or has a writable publication, the read-only one while it has a read-only publication.
   */
  const releaseUnusedLoops = async (v: VolumeRecord): Promise<void> => {
    if (dataLayout(v) !== 'file') return;
    const file = d.volumePath(v.id);
    if (!(await exists(file))) return;
    const pubs = Object.values(v.published);
    const staged = Object.keys(v.staged).length > 0;
    // A filesystem volume's publications are binds of its staged mount: all on the read-write device.
    const needRw = staged || (v.fsType ? pubs.length > 0 : pubs.some((p) => !p.readOnly));
    const needRo = !v.fsType && pubs.some((p) => p.readOnly);
    const detach = async (dev: string): Promise<void> => {
      // Detaching a mounted device only marks it for autoclear, hiding the leak: leave it and say so.
      const m = await mountsOfSource(dev);
      if (m.length > 0) {
        log.warn('loop device still mounted; not detached', { volume: v.id, device: dev, mounts: m.map((x) => x.mountPoint).join(', ') });
        return;
      }
      await detachLoop(dev);
    };
    if (!needRw) for (const dev of await findLoopByBackingFile(file, { readOnly: false })) await detach(dev);
    if (!needRo) for (const dev of await findLoopByBackingFile(file, { readOnly: true })) await detach(dev);
  };

  /**
   * Makes sure the staging path shows the volume's data. After a reboot the staging record
   * survives but the bind mount does not; publishing the bare staging directory would hand the
   * workload an empty directory instead of its data, so the staging mount is re-created first.
   */
  const ensureStaged = async (v: VolumeRecord, staging: string, mountFlags: readonly string[]): Promise<void> => {
    const state = await stagingState(v, staging);
    if (state === 'other') throw failedPrecondition(`staging_target_path ${staging} has another mount`);
    if (state === 'ours') return;
    await mkdir(staging, { recursive: true });
    if (v.fsType) await mountFilesystem(v, staging, mountFlags);
    else await bindMount(d.volumePath(v.id), staging);
    log.warn('staging mount was missing; re-created', { volume: v.id, staging });
  };

  return {
    NodeStageVolume: unary(log, 'NodeStageVolume', async (req) => {
      if (!req.volumeId) throw missing('volume_id');
      if (!req.stagingTargetPath) throw missing('staging_target_path');
      const cap = parseCapability(req.volumeCapability, 'volume_capability');
      const staging = path.resolve(req.stagingTargetPath);
      return d.locks.run(`vol:${req.volumeId}`, async () => {
        const v = d.getVolume(req.volumeId);
        checkUsable(v, cap);
        if (config.enableAttach && !v.attachments[config.nodeId]) {
          throw failedPrecondition(`volume ${v.id} is not published to node ${config.nodeId} (ControllerPublishVolume first)`);
        }
        const src = d.volumePath(v.id);
        if (v.kind === 'mount') {
          await mkdir(staging, { recursive: true });
          const state = await stagingState(v, staging);
          // Spec: staged at this path but incompatible → ALREADY_EXISTS.
          if (state === 'other') throw alreadyExists(`staging_target_path ${staging} has another mount`);
          if (state === 'none') {
            if (v.fsType) await mountFilesystem(v, staging, cap.mountFlags);
            else await bindMount(src, staging);
          }
        } else {
          // Block: the loop device is the staged state; the staging directory stays untouched.
          await attachLoop(src);
        }
        if (!v.staged[staging]) {
          v.staged[staging] = { stagingPath: staging };
          await d.store.save();
        }
        return {};
      });
    }),

    NodeUnstageVolume: unary(log, 'NodeUnstageVolume', async (req) => {
      if (!req.volumeId) throw missing('volume_id');
      if (!req.stagingTargetPath) throw missing('staging_target_path');
      const staging = path.resolve(req.stagingTargetPath);
      return d.locks.run(`vol:${req.volumeId}`, async () => {
        const v = d.getVolume(req.volumeId);
        if (v.kind === 'mount' && (await stagingState(v, staging)) === 'ours') await unmountAll(staging);
        if (v.staged[staging]) {
          delete v.staged[staging];
          await d.store.save();
        }
        await releaseUnusedLoops(v);
        return {};
      });
    }),

    NodePublishVolume: unary(log, 'NodePublishVolume', async (req) => {
      if (!req.volumeId) throw missing('volume_id');
      if (!req.targetPath) throw missing('target_path');
      const cap = parseCapability(req.volumeCapability, 'volume_capability');
      const target = path.resolve(req.targetPath);
      const ephemeral = isEphemeralPublish(req.volumeContext);
      return d.locks.run(`vol:${req.volumeId}`, async () => {
        const v = ephemeral ? await ensureEphemeralVolume(d, req.volumeId, req.volumeContext ?? {}) : d.getVolume(req.volumeId);
        checkUsable(v, cap);
        // An ephemeral volume is published without staging (the kubelet never stages one); for the
        // rest we advertise STAGE_UNSTAGE_VOLUME, so the CO must stage first (spec: FAILED_PRECONDITION).
        const staging = v.ephemeral ? '' : path.resolve(req.stagingTargetPath || failMissingStaging());
        if (!v.ephemeral && !v.staged[staging]) throw failedPrecondition(`volume ${v.id} is not staged at ${staging}`);
        if (v.kind === 'mount' && !v.ephemeral) await ensureStaged(v, staging, cap.mountFlags);
        const readOnly = req.readonly || cap.mode === 'SINGLE_NODE_READER_ONLY';
        // A read-only block publication gets its own read-only loop device: a read-only bind
        // mount of a device node does not stop writes to the device.
        const source = v.ephemeral ? d.volumePath(v.id) : v.kind === 'mount' ? staging : await attachLoop(d.volumePath(v.id), { readOnly });

        const prev = v.published[target];
        if (await isMountPoint(target)) {
          if (!(await sameFile(target, source))) throw alreadyExists(`target_path ${target} has another mount`);
          const ro = (await isReadOnlyMount(target)) === true;
          if (ro !== readOnly || (prev && prev.readOnly !== readOnly)) {
            throw alreadyExists(`volume ${v.id} is already published at ${target} with readonly=${ro}`);
          }
        } else {
          // The CO creates the parent; the driver creates the target itself (a directory, or a
          // file for a block device to be bind-mounted onto).
          if (v.kind === 'mount') await mkdir(target, { recursive: true });
          else await (await open(target, 'a', 0o600)).close();
          await bindMount(source, target, { readOnly });
        }
        if (!prev || prev.readOnly !== readOnly || prev.stagingPath !== staging) {
          v.published[target] = { targetPath: target, readOnly, stagingPath: staging, mountFlags: [...cap.mountFlags] };
          await d.store.save();
        }
        return {};
      });
    }),

    NodeUnpublishVolume: unary(log, 'NodeUnpublishVolume', async (req) => {
      if (!req.volumeId) throw missing('volume_id');
      if (!req.targetPath) throw missing('target_path');
      const target = path.resolve(req.targetPath);
      return d.locks.run(`vol:${req.volumeId}`, async () => {
        const v = d.getVolume(req.volumeId);
        const owner = Object.values(d.volumes).find((x) => x.id !== v.id && x.published[target]);
        if (owner) {
          // Another volume is published here: never tear down someone else's mount.
          log.warn('NodeUnpublishVolume: target belongs to another volume; nothing to do', { volume: v.id, owner: owner.id, target });
          return {};
        }
        // Spec: the SP deletes the file or directory it created at target_path.
        await cleanupMountPoint(target);
        if (v.published[target]) {
          delete v.published[target];
          await d.store.save();
        }
        await releaseUnusedLoops(v);
        await releaseEphemeralVolume(d, v);
        return {};
      });
    }),

    NodeGetInfo: unary(log, 'NodeGetInfo', async () => ({
      nodeId: config.nodeId,
      maxVolumesPerNode: config.maxVolumesPerNode,
      accessibleTopology: d.topology(),
    })),

    NodeGetCapabilities: unary(log, 'NodeGetCapabilities', async () => ({ capabilities: nodeCapabilities() })),

    NodeGetVolumeStats: unary(log, 'NodeGetVolumeStats', async (req) => {
      if (!req.volumeId) throw missing('volume_id');
      if (!req.volumePath) throw missing('volume_path');
      const v = d.getVolume(req.volumeId);
      if (!(await exists(req.volumePath))) throw notFound(`volume_path ${req.volumePath} does not exist`);
      const condition = await d.condition(v);
      if (condition.abnormal) return { usage: [], volumeCondition: condition };
      let usage: VolumeUsage[];
      if (v.fsType) {
        // The volume's own filesystem: statfs of the path is the truth, overhead and all.
        if (!(await isMountPoint(req.volumePath))) throw notFound(`volume_path ${req.volumePath} is not a mount of volume ${v.id}`);
        const fs = await filesystemStats(req.volumePath);
        usage = [
          { unit: 'BYTES', total: fs.totalBytes, used: fs.usedBytes, available: fs.availableBytes },
          { unit: 'INODES', total: fs.totalInodes, used: fs.totalInodes - fs.freeInodes, available: fs.freeInodes },
        ];
      } else if (v.kind === 'block') {
        usage = [{ unit: 'BYTES', total: v.capacityBytes }];
      } else {
        const [u, fs] = await Promise.all([directoryUsage(d.volumePath(v.id)), filesystemStats(d.volumePath(v.id))]);
        const available = Math.max(0, Math.min(v.capacityBytes - u.usedBytes, fs.availableBytes));
        usage = [
          { unit: 'BYTES', total: v.capacityBytes, used: u.usedBytes, available },
          { unit: 'INODES', total: fs.totalInodes, used: u.usedInodes, available: fs.freeInodes },
        ];
      }
      return { usage, volumeCondition: condition };
    }),

    NodeExpandVolume: unary(log, 'NodeExpandVolume', async (req) => {
      if (!req.volumeId) throw missing('volume_id');
      if (!req.volumePath) throw missing('volume_path');
      return d.locks.run(`vol:${req.volumeId}`, async () => {
        const v = d.getVolume(req.volumeId);
        if (!(await exists(req.volumePath))) throw notFound(`volume_path ${req.volumePath} does not exist`);
        if (req.volumeCapability) {
          const cap = parseCapability(req.volumeCapability, 'volume_capability');
          if (cap.kind !== v.kind) throw failedPrecondition(`volume_capability: volume ${v.id} is a ${v.kind} volume, not ${cap.kind}`);
        }
        if (v.fsType) {
          const fsType = fsTypeOf(v);
          const devs = await findLoopByBackingFile(d.volumePath(v.id), { readOnly: false });
          if (devs.length === 0) throw failedPrecondition(`volume ${v.id} is not staged on this node: no filesystem to grow`);
          // The device first (it caps what the filesystem can see), then the mounted filesystem online.
          for (const dev of devs) {
            await refreshLoopCapacity(dev);
            const mounted = await mountsOfSource(dev);
            if (mounted.length === 0) throw failedPrecondition(`volume ${v.id}'s filesystem is not mounted on this node (stage it first)`);
            await growMounted(dev, mounted[0]!.mountPoint, fsType);
          }
          log.info('filesystem expanded', { volume: v.id, bytes: v.capacityBytes });
        } else if (v.kind === 'block') {
          for (const dev of await findLoopByBackingFile(d.volumePath(v.id))) await refreshLoopCapacity(dev);
        }
        return { capacityBytes: v.capacityBytes };
      });
    }),
  };
}
