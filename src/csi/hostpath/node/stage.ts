import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { attachLoop } from '../../../mount/loop.js';
import { bindMount, unmountAll } from '../../../mount/mount.js';
import type {
  NodeStageVolumeRequest__Output,
  NodeStageVolumeResponse,
  NodeUnstageVolumeRequest__Output,
  NodeUnstageVolumeResponse,
} from '../../proto/types.js';
import { crashPoint } from '../crash.js';
import type { HostpathDriver } from '../driver.js';
import { alreadyExists, failedPrecondition, missing } from '../errors.js';
import { parseCapability } from '../validate.js';
import { commit } from '../intent.js';
import { releaseUnusedLoops } from '../volume-data.js';
import { checkUsable, mountFilesystem, stagingState } from './staging.js';

export async function nodeStageVolume(
  d: HostpathDriver,
  req: NodeStageVolumeRequest__Output,
): Promise<NodeStageVolumeResponse> {
  if (!req.volumeId) throw missing('volume_id');
  if (!req.stagingTargetPath) throw missing('staging_target_path');
  const cap = parseCapability(req.volumeCapability, 'volume_capability');
  const staging = path.resolve(req.stagingTargetPath);
  return d.locks.run(`vol:${req.volumeId}`, async () => {
    await d.adoptSharedVolume(req.volumeId);
    const v = d.getVolume(req.volumeId);
    checkUsable(v, cap);
    if (d.config.enableAttach && !v.attachments[d.config.nodeId]) {
      throw failedPrecondition(
        `volume ${v.id} is not published to node ${d.config.nodeId} (ControllerPublishVolume first)`,
      );
    }
    const src = d.volumePath(v.id);
    if (v.kind === 'mount') {
      await mkdir(staging, { recursive: true });
      const state = await stagingState(d, v, staging);
      // Spec: staged at this path but incompatible → ALREADY_EXISTS.
      if (state === 'other') throw alreadyExists(`staging_target_path ${staging} has another mount`);
      if (state === 'none') {
        if (v.fsType) await mountFilesystem(d, v, staging, cap.mountFlags);
        else {
          await bindMount(src, staging);
          crashPoint('NodeStageVolume:mounted');
        }
      }
    } else {
      // Block: the loop device is the staged state; the staging directory stays untouched.
      await attachLoop(src);
      crashPoint('NodeStageVolume:loop-attached');
    }
    if (!v.staged[staging]) {
      await commit(
        d,
        () => (v.staged[staging] = { stagingPath: staging }),
        () => delete v.staged[staging],
      );
      crashPoint('NodeStageVolume:recorded');
    }
    return {};
  });
}

export async function nodeUnstageVolume(
  d: HostpathDriver,
  req: NodeUnstageVolumeRequest__Output,
): Promise<NodeUnstageVolumeResponse> {
  if (!req.volumeId) throw missing('volume_id');
  if (!req.stagingTargetPath) throw missing('staging_target_path');
  const staging = path.resolve(req.stagingTargetPath);
  return d.locks.run(`vol:${req.volumeId}`, async () => {
    const v = d.getVolume(req.volumeId);
    if (v.kind === 'mount' && (await stagingState(d, v, staging)) === 'ours') await unmountAll(staging);
    crashPoint('NodeUnstageVolume:unmounted');
    const rec = v.staged[staging];
    if (rec) {
      await commit(
        d,
        () => delete v.staged[staging],
        () => (v.staged[staging] = rec),
      );
      crashPoint('NodeUnstageVolume:recorded');
    }
    await releaseUnusedLoops(d, v);
    return {};
  });
}
