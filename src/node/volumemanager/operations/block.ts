import { lstat, mkdir, open, readlink, rm, rmdir, symlink, unlink } from 'node:fs/promises';
import path from 'node:path';
import { CsiError } from '../../../csi/client.js';
import type { VolumeCapability } from '../../../csi/proto/types.js';
import { attachLoop, detachLoop, findLoopByBackingFile } from '../../../mount/loop.js';
import { bindMount, unmountAll } from '../../../mount/mount.js';
import { isMountPoint } from '../../../mount/mountinfo.js';
import type { AttachedVolume, MountedPod } from '../cache/actual-state.js';
import type { VolumeToMount } from '../cache/desired-state.js';
import type { CsiSource, VolumeSpec } from '../types.js';
import type { OperationContext } from './context.js';
import { goneFromDriver } from './csi.js';
import { CALL_PRIORITY } from './limiter.js';
import { blockGlobalMapPath, blockPublishPath, blockStagingPath, blockVolDataPath, podDeviceDir } from './paths.js';
import { writeVolData } from './voldata.js';

/**
 * Block volumes the kubelet way (csi_block.go + the generic block mapper): NodeStageVolume to
 * `volumeDevices/staging/<pv>`, NodePublishVolume to `volumeDevices/publish/<pv>/<pod uid>` (a
 * device file the driver creates), that device bind-mounted at `volumeDevices/<pv>/dev/<pod uid>`
 * with a loop device on it held as the descriptor lock, and the pod's
 * `pods/<uid>/volumeDevices/kubernetes.io~csi/<pv>` symlink pointing at the published device.
 */
function csiOf(spec: VolumeSpec): CsiSource {
  if (!spec.csi) throw new Error(`volume ${spec.specName} has no CSI source`);
  return spec.csi;
}

function blockCapability(spec: VolumeSpec): VolumeCapability {
  return { block: {}, accessMode: { mode: csiOf(spec).accessMode } };
}

const ignore =
  (codes: string[]) =>
  (e: NodeJS.ErrnoException): void => {
    if (!e.code || !codes.includes(e.code)) throw e;
  };

/** SetUpDevice: stage to the block staging directory when the driver stages. */
export async function blockMountDevice(ctx: OperationContext, t: VolumeToMount, signal: AbortSignal): Promise<void> {
  const c = csiOf(t.spec);
  const client = ctx.csi.get(c.driver);
  const staging = blockStagingPath(ctx.rootDir, t.spec.specName);
  await writeVolData(blockVolDataPath(ctx.rootDir, t.spec.specName), {
    driverName: c.driver,
    volumeHandle: c.volumeHandle,
  });
  if (!(await client.nodeCapabilities()).has('STAGE_UNSTAGE_VOLUME')) {
    ctx.asw.markDeviceMounted(t.volume, t.spec, '', 'Mounted');
    return;
  }
  await mkdir(staging, { recursive: true, mode: 0o750 });
  try {
    await ctx.limiter.run(
      CALL_PRIORITY.stage,
      () =>
        client.nodeStageVolume(
          {
            volumeId: c.volumeHandle,
            stagingTargetPath: staging,
            volumeCapability: blockCapability(t.spec),
            volumeContext: { ...c.volumeAttributes },
          },
          { signal },
        ),
      signal,
    );
  } catch (e) {
    // A block staging leaves no mount to look at: only the gRPC code tells whether it may have happened.
    if (e instanceof CsiError && e.uncertain) ctx.asw.markDeviceMounted(t.volume, t.spec, staging, 'Uncertain');
    else ctx.asw.markDeviceUnmounted(t.volume);
    throw e;
  }
  ctx.asw.markDeviceMounted(t.volume, t.spec, staging, 'Mounted');
}

/** MapPodDevice + MapBlockVolume: publish, bind into the global map dir, descriptor-lock loop, pod symlink. */
export async function blockSetUp(ctx: OperationContext, t: VolumeToMount, signal: AbortSignal): Promise<void> {
  const c = csiOf(t.spec);
  const client = ctx.csi.get(c.driver);
  const staged = (await client.nodeCapabilities()).has('STAGE_UNSTAGE_VOLUME');
  const publish = blockPublishPath(ctx.rootDir, t.spec.specName, t.pod.uid);
  const globalMap = path.join(blockGlobalMapPath(ctx.rootDir, t.spec.specName), t.pod.uid);
  const link = path.join(podDeviceDir(ctx.rootDir, t.pod.uid), t.spec.specName);
  const mounted = { volume: t.volume, pod: t.pod, outerSpecName: t.outerSpecName, spec: t.spec, hostPath: link };
  await mkdir(path.dirname(publish), { recursive: true, mode: 0o750 });
  try {
    await ctx.limiter.run(
      CALL_PRIORITY.publish,
      () =>
        client.nodePublishVolume(
          {
            volumeId: c.volumeHandle,
            ...(staged ? { stagingTargetPath: blockStagingPath(ctx.rootDir, t.spec.specName) } : {}),
            targetPath: publish,
            volumeCapability: blockCapability(t.spec),
            readonly: t.spec.readOnly,
            volumeContext: { ...c.volumeAttributes },
          },
          { signal },
        ),
      signal,
    );
  } catch (e) {
    if ((e instanceof CsiError && e.uncertain) || (await isMountPoint(publish)))
      ctx.asw.markVolumeMounted({ ...mounted, state: 'Uncertain' });
    throw e;
  }
  // Marked Uncertain until every step below is done: a failure midway is then undone by TearDown or finished by SetUp again.
  ctx.asw.markVolumeMounted({ ...mounted, state: 'Uncertain' });
  await mkdir(path.dirname(globalMap), { recursive: true, mode: 0o750 });
  if (!(await isMountPoint(globalMap))) {
    await (await open(globalMap, 'a', 0o600)).close();
    await bindMount(publish, globalMap);
  }
  await attachLoop(globalMap); // idempotent: an existing loop on the file is reused
  await mkdir(path.dirname(link), { recursive: true, mode: 0o750 });
  const current = await readlink(link).catch(() => undefined);
  if (current !== publish) {
    await unlink(link).catch(ignore(['ENOENT']));
    await symlink(publish, link);
  }
  ctx.asw.markVolumeMounted({ ...mounted, state: 'Mounted' });
}

/** UnmapBlockVolume + UnmapPodDevice: release the loop, unmount and remove the global bind, the symlink, then unpublish. */
export async function blockTearDown(ctx: OperationContext, m: MountedPod, signal: AbortSignal): Promise<void> {
  const c = csiOf(m.spec);
  const globalMap = path.join(blockGlobalMapPath(ctx.rootDir, m.spec.specName), m.pod.uid);
  const publish = blockPublishPath(ctx.rootDir, m.spec.specName, m.pod.uid);
  const exists = await lstat(globalMap).then(
    () => true,
    () => false,
  );
  if (exists) {
    for (const dev of await findLoopByBackingFile(globalMap)) await detachLoop(dev);
    await unmountAll(globalMap);
    await rm(globalMap, { force: true });
  }
  await unlink(m.hostPath).catch(ignore(['ENOENT']));
  await rmdir(path.dirname(m.hostPath)).catch(ignore(['ENOENT', 'ENOTEMPTY']));
  await rmdir(path.dirname(path.dirname(m.hostPath))).catch(ignore(['ENOENT', 'ENOTEMPTY']));
  const client = ctx.csi.get(c.driver);
  await ctx.limiter.run(
    CALL_PRIORITY.teardown,
    () => client.nodeUnpublishVolume({ volumeId: c.volumeHandle, targetPath: publish }, { signal }),
    signal,
  );
  if (await isMountPoint(publish)) throw new Error(`${publish} is still mounted after NodeUnpublishVolume`);
  await rm(publish, { force: true });
  await rmdir(path.dirname(publish)).catch(ignore(['ENOENT', 'ENOTEMPTY']));
  ctx.asw.markVolumeUnmounted(m.pod.uid, m.volume);
}

/** TearDownDevice: unstage, then the staging dir, the global map dir and vol_data.json. */
export async function blockUnmountDevice(ctx: OperationContext, v: AttachedVolume, signal: AbortSignal): Promise<void> {
  const c = csiOf(v.spec);
  const client = ctx.csi.get(c.driver);
  const staging = blockStagingPath(ctx.rootDir, v.spec.specName);
  if ((await client.nodeCapabilities()).has('STAGE_UNSTAGE_VOLUME')) {
    try {
      await ctx.limiter.run(
        CALL_PRIORITY.teardown,
        () => client.nodeUnstageVolume({ volumeId: c.volumeHandle, stagingTargetPath: staging }, { signal }),
        signal,
      );
    } catch (e) {
      if (!(await goneFromDriver(e, staging))) throw e;
    }
  }
  await rmdir(staging).catch(ignore(['ENOENT', 'ENOTEMPTY']));
  const mapDir = blockGlobalMapPath(ctx.rootDir, v.spec.specName);
  await rmdir(mapDir).catch(ignore(['ENOENT', 'ENOTEMPTY']));
  await unlink(blockVolDataPath(ctx.rootDir, v.spec.specName)).catch(ignore(['ENOENT']));
  await rmdir(path.dirname(blockVolDataPath(ctx.rootDir, v.spec.specName))).catch(ignore(['ENOENT', 'ENOTEMPTY']));
  await rmdir(path.dirname(mapDir)).catch(ignore(['ENOENT', 'ENOTEMPTY']));
  ctx.asw.markDeviceUnmounted(v.volume);
}
