import { mkdir, stat } from 'node:fs/promises';
import { attachLoop, findLoopByBackingFile, refreshLoopCapacity } from '../../../mount/loop.js';
import { bindMount, mount } from '../../../mount/mount.js';
import { findMount, mountsOfSource } from '../../../mount/mountinfo.js';
import { crashPoint } from '../crash.js';
import type { HostpathDriver } from '../driver.js';
import { failedPrecondition } from '../errors.js';
import {
  formatDevice,
  growMounted,
  growsOnlyMounted,
  growUnmounted,
  isFsType,
  openPristineRoot,
  probeFsType,
  type FsType,
} from '../filesystem.js';
import { exists } from '../fsops.js';
import type { VolumeRecord } from '../state.js';
import { unsupportedReason, type ParsedCapability } from '../validate.js';
import { releaseUnusedLoops } from '../volume-data.js';

// Node steps record what they did after doing it: what they act on (mounts, loop devices) can be
// found again from the mount table and the loop devices' backing files, so every step re-checks
// what a crash may have left, a retry finishes it, and start-up detaches loop devices no record needs.

/** Same inode ⇒ the mount at `target` shows `source` (how we recognise our own bind mounts). */
export async function sameFile(a: string, b: string): Promise<boolean> {
  try {
    const [x, y] = await Promise.all([stat(a), stat(b)]);
    return x.dev === y.dev && x.ino === y.ino && (!x.isBlockDevice() || x.rdev === y.rdev);
  } catch {
    return false;
  }
}

// Spec (NodeStage/NodePublish "Exceeds capabilities"): a capability the volume does not have
// is FAILED_PRECONDITION, whether the access type or the access mode is wrong.
export function checkUsable(v: VolumeRecord, cap: ParsedCapability): void {
  if (cap.kind !== v.kind)
    throw failedPrecondition(`volume_capability: volume ${v.id} is a ${v.kind} volume, not ${cap.kind}`);
  const why = unsupportedReason(cap);
  if (why) throw failedPrecondition(why);
  // A directory volume ignores fs_type, as it always has (a PV may name one from its class).
  if (v.fsType && cap.fsType && cap.fsType !== v.fsType) {
    throw failedPrecondition(
      `volume_capability.mount.fs_type: volume ${v.id} has a ${v.fsType} filesystem, not ${cap.fsType}`,
    );
  }
}

export function fsTypeOf(v: VolumeRecord): FsType {
  if (!v.fsType || !isFsType(v.fsType))
    throw failedPrecondition(`volume ${v.id} has no filesystem this driver can mount (${v.fsType ?? 'none'})`);
  return v.fsType;
}

/**
 * What is mounted at `staging`: nothing, this volume (its directory bound there, or its
 * filesystem from its loop device), or something else.
 */
export async function stagingState(
  d: HostpathDriver,
  v: VolumeRecord,
  staging: string,
): Promise<'none' | 'ours' | 'other'> {
  const src = d.volumePath(v.id);
  // The staging path showing the volume's own directory can only be our bind mount: no need to
  // read the mount table (thousands of lines on a busy node) for the common re-check.
  if (!v.fsType && (await sameFile(staging, src))) return 'ours';
  const m = await findMount(staging);
  if (!m) return 'none';
  if (!v.fsType) return 'other';
  const loops = (await exists(src)) ? await findLoopByBackingFile(src, { readOnly: false }) : [];
  return loops.includes(m.source) ? 'ours' : 'other';
}

/**
 * Mounts a filesystem volume at `staging`. Each step re-checks what a crash may have left:
 * a loop device already attached is reused; a device with a filesystem is never formatted again
 * (one of another type is refused); a filesystem smaller than its device (a clone grown past
 * its source, an expansion while not staged or interrupted before NodeExpandVolume) is grown.
 */
export async function mountFilesystem(
  d: HostpathDriver,
  v: VolumeRecord,
  staging: string,
  mountFlags: readonly string[],
): Promise<void> {
  const fsType = fsTypeOf(v);
  const file = d.volumePath(v.id);
  const dev = await attachLoop(file);
  crashPoint('NodeStageVolume:loop-attached');
  try {
    await refreshLoopCapacity(dev);
    const found = await probeFsType(dev);
    if (found === undefined) {
      await formatDevice(dev, fsType);
      crashPoint('NodeStageVolume:formatted');
      d.log.info('volume formatted', { volume: v.id, fsType, device: dev });
    } else if (found !== fsType) {
      throw failedPrecondition(`volume ${v.id} holds a ${found} filesystem, not ${fsType}; it is never reformatted`);
    }
    // Never an offline resize of a device whose filesystem is mounted elsewhere (a second staging path).
    if ((await mountsOfSource(dev)).length === 0) await growUnmounted(dev, fsType, (await stat(file)).size);
    await mkdir(staging, { recursive: true });
    await mount(dev, staging, fsType, mountFlags);
    crashPoint('NodeStageVolume:mounted');
    await openPristineRoot(staging);
    if (growsOnlyMounted(fsType)) await growMounted(dev, staging, fsType);
  } catch (e) {
    // Leave no device behind that no staging record accounts for.
    await releaseUnusedLoops(d, v).catch((x: unknown) =>
      d.log.warn('releasing loop device failed', { volume: v.id, error: String(x) }),
    );
    throw e;
  }
}

/**
 * Makes sure the staging path shows the volume's data. After a reboot the staging record
 * survives but the bind mount does not; publishing the bare staging directory would hand the
 * workload an empty directory instead of its data, so the staging mount is re-created first.
 */
export async function ensureStaged(
  d: HostpathDriver,
  v: VolumeRecord,
  staging: string,
  mountFlags: readonly string[],
): Promise<void> {
  const state = await stagingState(d, v, staging);
  if (state === 'other') throw failedPrecondition(`staging_target_path ${staging} has another mount`);
  if (state === 'ours') return;
  await mkdir(staging, { recursive: true });
  if (v.fsType) await mountFilesystem(d, v, staging, mountFlags);
  else await bindMount(d.volumePath(v.id), staging);
  d.log.warn('staging mount was missing; re-created', { volume: v.id, staging });
}
