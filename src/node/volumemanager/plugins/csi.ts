import path from 'node:path';
import type { CSIDriver } from 'kubernetes-types/storage/v1.js';
import { blockMountDevice, blockSetUp, blockTearDown, blockUnmountDevice } from '../operations/block.js';
import { csiMountDevice, csiSetUp, csiTearDown, csiUnmountDevice, csiVerifyAttached } from '../operations/csi.js';
import {
  blockVolDataPath,
  blockStagingPath,
  deviceMountPath,
  podDeviceDir,
  podPluginDir,
  sha256Hex,
  VOL_DATA_FILE,
} from '../operations/paths.js';
import { readVolData } from '../operations/voldata.js';
import { csiAccessMode } from '../populator/access-mode.js';
import { csiVolumeName, type VolumeMode, type VolumeSpec } from '../types.js';
import { quantityOrUndefined as bytes } from './common.js';
import { listDir } from './fsutil.js';
import type { ReconstructEnv, VolumePlugin } from './plugin.js';

const PLUGIN = 'kubernetes.io/csi';

/** Go's %q of a []VolumeLifecycleMode, as the kubelet's message prints it. */
const goQuoted = (modes: readonly string[]): string => `[${modes.map((m) => JSON.stringify(m)).join(' ')}]`;

/** kubelet supportsVolumeLifecycleMode: an inline volume needs a CSIDriver listing Ephemeral. */
export function ephemeralRefusal(driver: string, obj: CSIDriver | undefined): string | undefined {
  if (!obj) return `volume mode "Ephemeral" not supported by driver ${driver} (no CSIDriver object)`;
  const modes = obj.spec.volumeLifecycleModes ?? ['Persistent'];
  return modes.includes('Ephemeral')
    ? undefined
    : `volume mode "Ephemeral" not supported by driver ${driver} (only supports ${goQuoted(modes)})`;
}

export function csiSpecFor(
  specName: string,
  driver: string,
  handle: string,
  ephemeral: boolean,
  block = false,
): VolumeSpec {
  return {
    plugin: PLUGIN,
    specName,
    mode: block ? 'Block' : 'Filesystem',
    readOnly: false,
    ...(ephemeral ? { ephemeral } : {}),
    csi: {
      driver,
      volumeHandle: handle,
      fsType: '',
      mountOptions: [],
      volumeAttributes: {},
      accessMode: 'SINGLE_NODE_WRITER',
    },
  };
}

const isBlock = (s: VolumeSpec): boolean => s.mode === 'Block';

/** CSI: PVs with a `csi` source (filesystem and block) and inline ephemeral `csi:` pod volumes. */
export const csiPlugin: VolumePlugin = {
  name: PLUGIN,
  canSupport: (src) => (src.kind === 'pv' ? src.pv.spec?.csi !== undefined : src.volume.csi !== undefined),
  resolve(src, env) {
    const { lookups, ref } = env;
    if (src.kind === 'inline') {
      const c = src.volume.csi!;
      const drv = lookups.csiDriver(c.driver);
      const refusal = ephemeralRefusal(c.driver, drv);
      if (refusal) return { problem: `MountVolume.SetUp failed for volume "${src.volume.name}" : ${refusal}` };
      // The kubelet names an inline volume per pod: csi-<sha256(podUID + volume name)>.
      const handle = `csi-${sha256Hex(ref.uid + src.volume.name)}`;
      return {
        volume: csiVolumeName(c.driver, handle),
        pluginIsAttachable: false,
        spec: {
          plugin: PLUGIN,
          specName: src.volume.name,
          mode: 'Filesystem',
          readOnly: c.readOnly === true,
          ephemeral: true,
          csi: {
            driver: c.driver,
            volumeHandle: handle,
            fsType: c.fsType ?? '',
            mountOptions: [],
            volumeAttributes: { ...(c.volumeAttributes ?? {}) },
            accessMode: 'SINGLE_NODE_WRITER',
          },
        },
      };
    }
    const { pv, claim, volume } = src;
    const csi = pv.spec!.csi!;
    const pvName = pv.metadata?.name ?? '';
    const mode: VolumeMode = pv.spec?.volumeMode === 'Block' ? 'Block' : 'Filesystem';
    const capacity = pv.spec?.capacity?.['storage'];
    const capacityBytes = bytes(capacity);
    const claimBytes = bytes(claim.status?.capacity?.['storage']);
    const drv = lookups.csiDriver(csi.driver);
    return {
      volume: csiVolumeName(csi.driver, csi.volumeHandle),
      pluginIsAttachable: drv?.spec.attachRequired ?? true,
      spec: {
        plugin: PLUGIN,
        specName: pvName,
        mode,
        readOnly: volume.persistentVolumeClaim?.readOnly === true || csi.readOnly === true,
        csi: {
          driver: csi.driver,
          volumeHandle: csi.volumeHandle,
          fsType: csi.fsType ?? '',
          mountOptions: [...(pv.spec?.mountOptions ?? [])],
          volumeAttributes: { ...(csi.volumeAttributes ?? {}) },
          accessMode: csiAccessMode(pv.spec?.accessModes),
        },
        ...(capacity !== undefined ? { capacity } : {}),
        ...(capacityBytes !== undefined ? { capacityBytes } : {}),
        claim: { namespace: claim.metadata?.namespace ?? ref.namespace, name: claim.metadata?.name ?? '' },
      },
      resizeNeeded: capacityBytes !== undefined && claimBytes !== undefined && capacityBytes > claimBytes,
      requiresRepublish: drv?.spec.requiresRepublish === true,
    };
  },
  // Persistent CSI volumes are staged once per node; inline ephemeral ones are published without staging.
  requiresDeviceMount: (spec) => !spec.ephemeral,
  verifyAttached: (ctx, t) => csiVerifyAttached(ctx, t),
  mountDevice: (ctx, t, s) => (isBlock(t.spec) ? blockMountDevice(ctx, t, s) : csiMountDevice(ctx, t, s)),
  setUp: (ctx, t, s) => (isBlock(t.spec) ? blockSetUp(ctx, t, s) : csiSetUp(ctx, t, s)),
  tearDown: (ctx, m, s) => (isBlock(m.spec) ? blockTearDown(ctx, m, s) : csiTearDown(ctx, m, s)),
  unmountDevice: async (ctx, v, s) => {
    if (v.spec.ephemeral) return ctx.asw.markDeviceUnmounted(v.volume);
    return isBlock(v.spec) ? blockUnmountDevice(ctx, v, s) : csiUnmountDevice(ctx, v, s);
  },
  reconstruct: async ({ rootDir, asw, log }: ReconstructEnv, uid) => {
    let n = 0;
    const pod = { uid, namespace: '', name: '' };
    const csiDir = podPluginDir(rootDir, uid, PLUGIN);
    for (const specName of await listDir(csiDir)) {
      const data = await readVolData(path.join(csiDir, specName, VOL_DATA_FILE));
      if (!data) {
        log.warn('pod volume without a usable vol_data.json; left for orphan cleanup', {
          dir: path.join(csiDir, specName),
        });
        continue;
      }
      const ephemeral = data.volumeLifecycleMode === 'Ephemeral';
      const spec = csiSpecFor(specName, data.driverName, data.volumeHandle, ephemeral);
      const name = csiVolumeName(data.driverName, data.volumeHandle);
      asw.markVolumeAttached(name, spec, '');
      if (!ephemeral)
        asw.markDeviceMounted(name, spec, deviceMountPath(rootDir, data.driverName, data.volumeHandle), 'Uncertain');
      asw.markVolumeMounted({
        volume: name,
        pod,
        outerSpecName: data.outerSpecName ?? specName,
        spec,
        state: 'Uncertain',
        hostPath: path.join(csiDir, specName, 'mount'),
      });
      n++;
    }
    // Block: the pod's device symlinks, with driver and handle from the global vol_data.json.
    for (const specName of await listDir(podDeviceDir(rootDir, uid))) {
      const data = await readVolData(blockVolDataPath(rootDir, specName));
      if (!data) {
        log.warn('block volume without a usable vol_data.json; left for orphan cleanup', {
          pod: uid,
          volume: specName,
        });
        continue;
      }
      const spec = csiSpecFor(specName, data.driverName, data.volumeHandle, false, true);
      const name = csiVolumeName(data.driverName, data.volumeHandle);
      asw.markVolumeAttached(name, spec, '');
      asw.markDeviceMounted(name, spec, blockStagingPath(rootDir, specName), 'Uncertain');
      asw.markVolumeMounted({
        volume: name,
        pod,
        outerSpecName: specName,
        spec,
        state: 'Uncertain',
        hostPath: path.join(podDeviceDir(rootDir, uid), specName),
      });
      n++;
    }
    return n;
  },
};
