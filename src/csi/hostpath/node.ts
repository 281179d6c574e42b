import { mkdir, open, stat } from 'node:fs/promises';
import path from 'node:path';
import { attachLoop, detachLoop, findLoopByBackingFile, refreshLoopCapacity } from '../../node/mount/loop.js';
import { bindMount, cleanupMountPoint, isReadOnlyMount, unmountAll } from '../../node/mount/mount.js';
import { isMountPoint } from '../../node/mount/mountinfo.js';
import type { NodeHandlers, NodeServiceCapability, VolumeUsage } from '../proto/types.js';
import { unary, type HostpathDriver } from './driver.js';
import { alreadyExists, failedPrecondition, missing, notFound } from './errors.js';
import { directoryUsage, exists, filesystemStats } from './fsops.js';
import type { VolumeRecord } from './state.js';
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

export function nodeHandlers(d: HostpathDriver): NodeHandlers {
  const log = d.log;
  const { config } = d;

  // Spec (NodeStage/NodePublish "Exceeds capabilities"): a capability the volume does not have
  // is FAILED_PRECONDITION, whether the access type or the access mode is wrong.
  const checkUsable = (v: VolumeRecord, cap: ParsedCapability): void => {
    if (cap.kind !== v.kind) throw failedPrecondition(`volume_capability: volume ${v.id} is a ${v.kind} volume, not ${cap.kind}`);
    const why = unsupportedReason(cap);
    if (why) throw failedPrecondition(why);
  };

  /**
   * Detaches loop devices nothing needs any more: the read-write device while the volume is staged
   * or has a writable publication, the read-only one while it has a read-only publication.
   */
  const releaseUnusedLoops = async (v: VolumeRecord): Promise<void> => {
    if (v.kind !== 'block') return;
    const file = d.volumePath(v.id);
    if (!(await exists(file))) return;
    const pubs = Object.values(v.published);
    const needRw = Object.keys(v.staged).length > 0 || pubs.some((p) => !p.readOnly);
    const needRo = pubs.some((p) => p.readOnly);
    if (!needRw) for (const dev of await findLoopByBackingFile(file, { readOnly: false })) await detachLoop(dev);
    if (!needRo) for (const dev of await findLoopByBackingFile(file, { readOnly: true })) await detachLoop(dev);
  };

  /**
   * Makes sure the staging path shows the volume's data. After a reboot the staging record
   * survives but the bind mount does not; publishing the bare staging directory would hand the
   * workload an empty directory instead of its data, so the staging mount is re-created first.
   */
  const ensureStaged = async (v: VolumeRecord, staging: string): Promise<void> => {
    const src = d.volumePath(v.id);
    if (await isMountPoint(staging)) {
      if (!(await sameFile(staging, src))) throw failedPrecondition(`staging_target_path ${staging} has another mount`);
      return;
    }
    await mkdir(staging, { recursive: true });
    await bindMount(src, staging);
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
          if (await isMountPoint(staging)) {
            // Spec: staged at this path but incompatible → ALREADY_EXISTS.
            if (!(await sameFile(staging, src))) throw alreadyExists(`staging_target_path ${staging} has another mount`);
          } else {
            await bindMount(src, staging);
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
        if (v.kind === 'mount' && (await isMountPoint(staging)) && (await sameFile(staging, d.volumePath(v.id)))) {
          await unmountAll(staging);
        }
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
      return d.locks.run(`vol:${req.volumeId}`, async () => {
        const v = d.getVolume(req.volumeId);
        checkUsable(v, cap);
        // We advertise STAGE_UNSTAGE_VOLUME, so the CO must stage first (spec: FAILED_PRECONDITION).
        if (!req.stagingTargetPath) throw failedPrecondition('staging_target_path is required: this driver stages volumes');
        const staging = path.resolve(req.stagingTargetPath);
        if (!v.staged[staging]) throw failedPrecondition(`volume ${v.id} is not staged at ${staging}`);
        if (v.kind === 'mount') await ensureStaged(v, staging);
        const readOnly = req.readonly || cap.mode === 'SINGLE_NODE_READER_ONLY';
        // A read-only block publication gets its own read-only loop device: a read-only bind
        // mount of a device node does not stop writes to the device.
        const source = v.kind === 'mount' ? staging : await attachLoop(d.volumePath(v.id), { readOnly });

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
      if (v.kind === 'block') {
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
        if (v.kind === 'block') {
          for (const dev of await findLoopByBackingFile(d.volumePath(v.id))) await refreshLoopCapacity(dev);
        }
        return { capacityBytes: v.capacityBytes };
      });
    }),
  };
}
