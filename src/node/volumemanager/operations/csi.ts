import { mkdir, rmdir, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { CsiClient } from '../../../csi/client.js';
import { CsiError } from '../../../csi/client.js';
import type { NodeCapabilityName, VolumeCapability } from '../../../csi/proto/types.js';
import { UnavailableError } from '../../../util/errors.js';
import { isMountPoint } from '../../../mount/mountinfo.js';
import type { AttachedVolume, MountedPod } from '../cache/actual-state.js';
import type { VolumeToMount } from '../cache/desired-state.js';
import { cleanSubPaths, mountSubPath } from '../subpath/subpath.js';
import type { CsiSource, VolumeSpec } from '../types.js';
import { attachRequired, type OperationContext } from './context.js';
import { CALL_PRIORITY } from './limiter.js';
import { applyFsGroup } from './fsgroup.js';
import {
  attachmentName,
  csiPublishPath,
  deviceMountPath,
  deviceVolDataPath,
  subPathDir,
  VOL_DATA_FILE,
} from './paths.js';
import { writeVolData } from './voldata.js';

function csiOf(spec: VolumeSpec): CsiSource {
  if (!spec.csi) throw new Error(`volume ${spec.specName} has no CSI source`);
  return spec.csi;
}

function capability(spec: VolumeSpec): VolumeCapability {
  const c = csiOf(spec);
  const accessMode = { mode: c.accessMode };
  if (spec.mode === 'Block') return { block: {}, accessMode };
  return { mount: { fsType: c.fsType, mountFlags: [...c.mountOptions] }, accessMode };
}

async function nodeCaps(client: CsiClient): Promise<ReadonlySet<NodeCapabilityName>> {
  return client.nodeCapabilities();
}

/** The VolumeAttachment's attachment metadata: the publish context for stage and publish (none without attach, as the kubelet). */
function publishContext(ctx: OperationContext, c: CsiSource): Record<string, string> {
  if (!attachRequired(ctx.api, c.driver)) return {};
  const va = ctx.api.volumeAttachment(attachmentName(c.volumeHandle, c.driver, ctx.nodeName));
  return { ...(va?.status?.attachmentMetadata ?? {}) };
}

/** Whether a failed call may have left something behind (a non-final gRPC code, or a mount we can see). */
async function uncertain(e: unknown, target: string): Promise<boolean> {
  return (e instanceof CsiError && e.uncertain) || (await isMountPoint(target));
}

/**
 * NodeUnstageVolume answered NOT_FOUND and nothing is mounted at the staging path: the driver no
 * longer has the volume (e.g. an earlier unstage succeeded but its reply was lost, and the volume
 * was deleted before the retry), so nothing of it is staged here. Retrying could never succeed and
 * would keep the directory and vol_data.json forever.
 */
export async function goneFromDriver(e: unknown, staging: string): Promise<boolean> {
  return e instanceof CsiError && e.grpcCodeName === 'NOT_FOUND' && !(await isMountPoint(staging));
}

async function removeIfPresent(p: string, kind: 'dir' | 'file'): Promise<void> {
  try {
    if (kind === 'dir') await rmdir(p);
    else await unlink(p);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTEMPTY') throw e;
  }
}

/**
 * VerifyControllerAttachedVolume: a driver whose CSIDriver says attachRequired is attached by the
 * attach/detach controller; wait until its VolumeAttachment reports status.attached. Others at once.
 */
export async function csiVerifyAttached(ctx: OperationContext, t: VolumeToMount): Promise<void> {
  const c = csiOf(t.spec);
  if (!t.spec.ephemeral && attachRequired(ctx.api, c.driver)) {
    const name = attachmentName(c.volumeHandle, c.driver, ctx.nodeName);
    const va = ctx.api.volumeAttachment(name);
    if (!va?.status?.attached) {
      throw new UnavailableError(
        `volume "${t.spec.specName}" is not attached to node ${ctx.nodeName} yet (VolumeAttachment ${name}${va ? ' not attached' : ' not found'})`,
      );
    }
  }
  ctx.asw.markVolumeAttached(t.volume, t.spec, '');
}

/** MountDevice: NodeStageVolume to the volume's globalmount when the driver stages (STAGE_UNSTAGE_VOLUME). */
export async function csiMountDevice(ctx: OperationContext, t: VolumeToMount, signal: AbortSignal): Promise<void> {
  const c = csiOf(t.spec);
  const client = ctx.csi.get(c.driver);
  const staging = deviceMountPath(ctx.rootDir, c.driver, c.volumeHandle);
  if (!(await nodeCaps(client)).has('STAGE_UNSTAGE_VOLUME')) {
    ctx.asw.markDeviceMounted(t.volume, t.spec, '', 'Mounted');
    return;
  }
  // vol_data.json first: a crash during staging leaves a record that reconstruction can act on.
  await writeVolData(deviceVolDataPath(staging), { driverName: c.driver, volumeHandle: c.volumeHandle });
  await mkdir(staging, { recursive: true, mode: 0o750 });
  try {
    await ctx.limiter.run(
      CALL_PRIORITY.stage,
      () =>
        client.nodeStageVolume(
          {
            volumeId: c.volumeHandle,
            publishContext: publishContext(ctx, c),
            stagingTargetPath: staging,
            volumeCapability: capability(t.spec),
            volumeContext: { ...c.volumeAttributes },
          },
          { signal },
        ),
      signal,
    );
  } catch (e) {
    if (await uncertain(e, staging)) ctx.asw.markDeviceMounted(t.volume, t.spec, staging, 'Uncertain');
    else {
      ctx.asw.markDeviceUnmounted(t.volume);
      await cleanupDeviceDir(staging);
    }
    throw e;
  }
  ctx.asw.markDeviceMounted(t.volume, t.spec, staging, 'Mounted');
}

async function cleanupDeviceDir(staging: string): Promise<void> {
  if (await isMountPoint(staging)) return;
  await removeIfPresent(staging, 'dir');
  await removeIfPresent(deviceVolDataPath(staging), 'file');
  await removeIfPresent(path.dirname(staging), 'dir');
}

/** SetUp: NodePublishVolume to the pod's `.../kubernetes.io~csi/<pv>/mount` (parent ours, target the driver's), then fsGroup and subPaths. */
export async function csiSetUp(ctx: OperationContext, t: VolumeToMount, signal: AbortSignal): Promise<void> {
  const c = csiOf(t.spec);
  const client = ctx.csi.get(c.driver);
  const target = csiPublishPath(ctx.rootDir, t.pod.uid, t.spec.specName);
  const dir = path.dirname(target);
  const staged = (await nodeCaps(client)).has('STAGE_UNSTAGE_VOLUME') && !t.spec.ephemeral;
  await mkdir(dir, { recursive: true, mode: 0o750 });
  await writeVolData(path.join(dir, VOL_DATA_FILE), {
    specVolID: t.spec.specName,
    volumeHandle: c.volumeHandle,
    driverName: c.driver,
    nodeName: ctx.nodeName,
    attachmentID:
      attachRequired(ctx.api, c.driver) && !t.spec.ephemeral
        ? attachmentName(c.volumeHandle, c.driver, ctx.nodeName)
        : '',
    volumeLifecycleMode: t.spec.ephemeral ? 'Ephemeral' : 'Persistent',
    outerSpecName: t.outerSpecName,
  });
  const driverObj = ctx.api.csiDriver(c.driver);
  const volumeContext: Record<string, string> = { ...c.volumeAttributes };
  // kubelet: the pod's info and the ephemeral flag are passed only to drivers that ask (podInfoOnMount);
  // a driver serving both lifecycle modes tells an inline volume by `csi.storage.k8s.io/ephemeral`.
  if (driverObj?.spec.podInfoOnMount) {
    Object.assign(volumeContext, {
      'csi.storage.k8s.io/pod.name': t.pod.name,
      'csi.storage.k8s.io/pod.namespace': t.pod.namespace,
      'csi.storage.k8s.io/pod.uid': t.pod.uid,
      'csi.storage.k8s.io/serviceAccount.name': t.serviceAccountName ?? '',
      'csi.storage.k8s.io/ephemeral': String(t.spec.ephemeral === true),
    });
  }
  const mounted = { volume: t.volume, pod: t.pod, outerSpecName: t.outerSpecName, spec: t.spec, hostPath: target };
  try {
    await ctx.limiter.run(
      CALL_PRIORITY.publish,
      () =>
        client.nodePublishVolume(
          {
            volumeId: c.volumeHandle,
            publishContext: publishContext(ctx, c),
            ...(staged ? { stagingTargetPath: deviceMountPath(ctx.rootDir, c.driver, c.volumeHandle) } : {}),
            targetPath: target,
            volumeCapability: capability(t.spec),
            readonly: t.spec.readOnly,
            volumeContext,
          },
          { signal, for: { kind: 'Pod', namespace: t.pod.namespace, name: t.pod.name } },
        ),
      signal,
    );
  } catch (e) {
    if (await uncertain(e, target)) ctx.asw.markVolumeMounted({ ...mounted, state: 'Uncertain' });
    else {
      ctx.asw.markVolumeUnmounted(t.pod.uid, t.volume);
      await removePodVolumeDir(target);
    }
    throw e;
  }
  // Published, not yet usable: Mounted only once fsGroup and subPaths are done, so that the pod
  // never reads as Running with a subPath that is about to fail (pod status watches the ASW).
  ctx.asw.markVolumeMounted({ ...mounted, state: 'Uncertain' });
  try {
    const policy = driverObj?.spec.fsGroupPolicy ?? 'ReadWriteOnceWithFSType';
    if (
      t.fsGroup !== undefined &&
      !t.spec.readOnly &&
      (policy === 'File' || (policy === 'ReadWriteOnceWithFSType' && c.fsType !== ''))
    ) {
      await applyFsGroup(target, t.fsGroup, { ...(t.fsGroupChangePolicy ? { policy: t.fsGroupChangePolicy } : {}) });
    }
    for (const sp of t.subPaths) {
      await mountSubPath({
        volumeRoot: target,
        subPath: sp.subPath,
        target: subPathDir(ctx.rootDir, t.pod.uid, t.outerSpecName, sp.container, sp.index),
        readOnly: sp.readOnly || t.spec.readOnly,
      });
    }
  } catch (e) {
    // Published but not usable: Uncertain makes the reconciler run SetUp again (publish is idempotent).
    ctx.asw.markVolumeMounted({ ...mounted, state: 'Uncertain' });
    throw e;
  }
  ctx.asw.markVolumeMounted({ ...mounted, state: 'Mounted' });
}

async function removePodVolumeDir(target: string): Promise<void> {
  if (await isMountPoint(target)) return;
  await removeIfPresent(target, 'dir');
  await removeIfPresent(path.join(path.dirname(target), VOL_DATA_FILE), 'file');
  await removeIfPresent(path.dirname(target), 'dir');
}

/** TearDown: CleanSubPaths, NodeUnpublishVolume, then the pod volume directory (never across a mount). */
export async function csiTearDown(ctx: OperationContext, m: MountedPod, signal: AbortSignal): Promise<void> {
  const c = csiOf(m.spec);
  await cleanSubPaths(subPathDir(ctx.rootDir, m.pod.uid, m.outerSpecName));
  const client = ctx.csi.get(c.driver);
  const target = m.hostPath;
  await ctx.limiter.run(
    CALL_PRIORITY.teardown,
    () => client.nodeUnpublishVolume({ volumeId: c.volumeHandle, targetPath: target }, { signal }),
    signal,
  );
  if (await isMountPoint(target)) throw new Error(`${target} is still mounted after NodeUnpublishVolume`);
  await removePodVolumeDir(target);
  ctx.asw.markVolumeUnmounted(m.pod.uid, m.volume);
}

/** UnmountDevice: NodeUnstageVolume once no pod has the volume, then the globalmount directory. */
export async function csiUnmountDevice(ctx: OperationContext, v: AttachedVolume, signal: AbortSignal): Promise<void> {
  const c = csiOf(v.spec);
  const staging = v.deviceMountPath || deviceMountPath(ctx.rootDir, c.driver, c.volumeHandle);
  const client = ctx.csi.get(c.driver);
  if ((await nodeCaps(client)).has('STAGE_UNSTAGE_VOLUME')) {
    try {
      await ctx.limiter.run(
        CALL_PRIORITY.teardown,
        () => client.nodeUnstageVolume({ volumeId: c.volumeHandle, stagingTargetPath: staging }, { signal }),
        signal,
      );
    } catch (e) {
      if (!(await goneFromDriver(e, staging))) throw e;
    }
    if (await isMountPoint(staging)) throw new Error(`${staging} is still mounted after NodeUnstageVolume`);
    await cleanupDeviceDir(staging);
  }
  ctx.asw.markDeviceUnmounted(v.volume);
}

/** NodeExpandVolume when the driver can, then the claim's status capacity follows the PV's. */
export async function csiExpand(ctx: OperationContext, t: VolumeToMount, signal: AbortSignal): Promise<void> {
  const c = csiOf(t.spec);
  const client = ctx.csi.get(c.driver);
  const caps = await nodeCaps(client);
  if (caps.has('EXPAND_VOLUME')) {
    await client.nodeExpandVolume(
      {
        volumeId: c.volumeHandle,
        volumePath: csiPublishPath(ctx.rootDir, t.pod.uid, t.spec.specName),
        ...(caps.has('STAGE_UNSTAGE_VOLUME')
          ? { stagingTargetPath: deviceMountPath(ctx.rootDir, c.driver, c.volumeHandle) }
          : {}),
        capacityRange: { requiredBytes: t.spec.capacityBytes ?? 0 },
        volumeCapability: capability(t.spec),
      },
      { signal },
    );
  }
  if (t.spec.claim && t.spec.capacity) {
    await ctx.client
      .resource('PersistentVolumeClaim')
      .patchStatus(
        t.spec.claim.name,
        'merge',
        { status: { capacity: { storage: t.spec.capacity } } },
        { namespace: t.spec.claim.namespace, signal },
      );
  }
  ctx.asw.markResizeRequired(t.pod.uid, t.volume, false);
}
