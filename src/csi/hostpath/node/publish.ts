import { mkdir, open } from 'node:fs/promises';
import path from 'node:path';
import { attachLoop } from '../../../mount/loop.js';
import { bindMount, cleanupMountPoint, isReadOnlyMount } from '../../../mount/mount.js';
import { isMountPoint } from '../../../mount/mountinfo.js';
import type {
  NodePublishVolumeRequest__Output,
  NodePublishVolumeResponse,
  NodeUnpublishVolumeRequest__Output,
  NodeUnpublishVolumeResponse,
} from '../../proto/types.js';
import { crashPoint } from '../crash.js';
import type { HostpathDriver } from '../driver.js';
import { alreadyExists, failedPrecondition, missing } from '../errors.js';
import { parseCapability } from '../validate.js';
import { ensureEphemeralVolume, isEphemeralPublish, releaseEphemeralVolume } from '../ephemeral.js';
import { commit } from '../intent.js';
import { releaseUnusedLoops } from '../volume-data.js';
import { checkUsable, ensureStaged, sameFile } from './staging.js';

export async function nodePublishVolume(
  d: HostpathDriver,
  req: NodePublishVolumeRequest__Output,
): Promise<NodePublishVolumeResponse> {
  if (!req.volumeId) throw missing('volume_id');
  if (!req.targetPath) throw missing('target_path');
  const cap = parseCapability(req.volumeCapability, 'volume_capability');
  const target = path.resolve(req.targetPath);
  const ephemeral = isEphemeralPublish(req.volumeContext);
  return d.locks.run(`vol:${req.volumeId}`, async () => {
    const v = ephemeral
      ? await ensureEphemeralVolume(d, req.volumeId, req.volumeContext ?? {})
      : d.getVolume(req.volumeId);
    checkUsable(v, cap);
    // An ephemeral volume is published without staging (the kubelet never stages one); for the
    // rest we advertise STAGE_UNSTAGE_VOLUME, so the CO must stage first (spec: FAILED_PRECONDITION).
    if (!v.ephemeral && !req.stagingTargetPath)
      throw failedPrecondition('staging_target_path is required: this driver stages volumes');
    const staging = v.ephemeral ? '' : path.resolve(req.stagingTargetPath);
    if (!v.ephemeral && !v.staged[staging]) throw failedPrecondition(`volume ${v.id} is not staged at ${staging}`);
    if (v.kind === 'mount' && !v.ephemeral) await ensureStaged(d, v, staging, cap.mountFlags);
    const readOnly = req.readonly || cap.mode === 'SINGLE_NODE_READER_ONLY';
    // A read-only block publication gets its own read-only loop device: a read-only bind
    // mount of a device node does not stop writes to the device.
    const source = v.ephemeral
      ? d.volumePath(v.id)
      : v.kind === 'mount'
        ? staging
        : await attachLoop(d.volumePath(v.id), { readOnly });

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
      crashPoint('NodePublishVolume:mounted');
    }
    if (!prev || prev.readOnly !== readOnly || prev.stagingPath !== staging) {
      const rec = { targetPath: target, readOnly, stagingPath: staging, mountFlags: [...cap.mountFlags] };
      await commit(
        d,
        () => (v.published[target] = rec),
        () => (prev ? (v.published[target] = prev) : delete v.published[target]),
      );
      crashPoint('NodePublishVolume:recorded');
    }
    return {};
  });
}

export async function nodeUnpublishVolume(
  d: HostpathDriver,
  req: NodeUnpublishVolumeRequest__Output,
): Promise<NodeUnpublishVolumeResponse> {
  if (!req.volumeId) throw missing('volume_id');
  if (!req.targetPath) throw missing('target_path');
  const target = path.resolve(req.targetPath);
  return d.locks.run(`vol:${req.volumeId}`, async () => {
    const v = d.getVolume(req.volumeId);
    const owner = d.liveVolumes().find((x) => x.id !== v.id && x.published[target]);
    if (owner) {
      // Another volume is published here: never tear down someone else's mount.
      d.log.warn('NodeUnpublishVolume: target belongs to another volume; nothing to do', {
        volume: v.id,
        owner: owner.id,
        target,
      });
      return {};
    }
    // Spec: the SP deletes the file or directory it created at target_path.
    await cleanupMountPoint(target);
    crashPoint('NodeUnpublishVolume:unmounted');
    const rec = v.published[target];
    if (rec) {
      await commit(
        d,
        () => delete v.published[target],
        () => (v.published[target] = rec),
      );
      crashPoint('NodeUnpublishVolume:recorded');
    }
    await releaseUnusedLoops(d, v);
    await releaseEphemeralVolume(d, v);
    return {};
  });
}
