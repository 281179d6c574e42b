import { createHash } from 'node:crypto';
import path from 'node:path';
import { escapePluginName, type PluginName, type PodUid } from '../types.js';

/**
 * The kubelet's directory layout under the agent's root dir (pkg/volume/csi: csi_attacher.go,
 * csi_mounter.go, csi_block.go), so tools and drivers that expect it find things where they look.
 */
export const CSI_PLUGIN = 'kubernetes.io/csi';
export const VOL_DATA_FILE = 'vol_data.json';

export function sha256Hex(s: string): string {
  return createHash('sha256').update(s).digest('hex');
}

export function csiPluginDir(root: string): string {
  return path.join(root, 'plugins', CSI_PLUGIN);
}

/** Staging path: `<root>/plugins/kubernetes.io/csi/<driver>/<sha256(handle)>/globalmount`. */
export function deviceMountPath(root: string, driver: string, handle: string): string {
  return path.join(csiPluginDir(root), driver, sha256Hex(handle), 'globalmount');
}

/** vol_data.json beside a staging path (fields driverName, volumeHandle). */
export function deviceVolDataPath(deviceMount: string): string {
  return path.join(path.dirname(deviceMount), VOL_DATA_FILE);
}

export function podsDir(root: string): string {
  return path.join(root, 'pods');
}

export function podDir(root: string, uid: PodUid): string {
  return path.join(podsDir(root), uid);
}

/** `<root>/pods/<uid>/volumes/<escaped plugin>`: the plugin's volumes of one pod. */
export function podPluginDir(root: string, uid: PodUid, plugin: PluginName): string {
  return path.join(podDir(root, uid), 'volumes', escapePluginName(plugin));
}

/** `<root>/pods/<uid>/volumes/<escaped plugin>/<specName>` (CSI: the publish target is its `mount`). */
export function podVolumeDir(root: string, uid: PodUid, plugin: PluginName, specName: string): string {
  return path.join(podPluginDir(root, uid, plugin), specName);
}

export function csiPublishPath(root: string, uid: PodUid, specName: string): string {
  return path.join(podVolumeDir(root, uid, CSI_PLUGIN, specName), 'mount');
}

/** `<root>/pods/<uid>/volume-subpaths`: every subPath bind mount of the pod lives under it. */
export function podSubPathsDir(root: string, uid: PodUid): string {
  return path.join(podDir(root, uid), 'volume-subpaths');
}

/** `<root>/pods/<uid>/volume-subpaths/<volume>/<container>/<index>`. */
export function subPathDir(
  root: string,
  uid: PodUid,
  outerSpecName: string,
  container?: string,
  index?: number,
): string {
  const base = path.join(podSubPathsDir(root, uid), outerSpecName);
  if (container === undefined) return base;
  return index === undefined ? path.join(base, container) : path.join(base, container, String(index));
}

// ---- block (csi_block.go) ---------------------------------------------------------------------
/** `<root>/plugins/kubernetes.io/csi/volumeDevices/<specName>/dev`: holds one bind-mounted device file per pod. */
export function blockGlobalMapPath(root: string, specName: string): string {
  return path.join(csiPluginDir(root), 'volumeDevices', specName, 'dev');
}
export function blockVolDataPath(root: string, specName: string): string {
  return path.join(csiPluginDir(root), 'volumeDevices', specName, 'data', VOL_DATA_FILE);
}
export function blockStagingPath(root: string, specName: string): string {
  return path.join(csiPluginDir(root), 'volumeDevices', 'staging', specName);
}
export function blockPublishPath(root: string, specName: string, uid: PodUid): string {
  return path.join(csiPluginDir(root), 'volumeDevices', 'publish', specName, uid);
}
/** The pod's device symlink directory: `<root>/pods/<uid>/volumeDevices/kubernetes.io~csi`. */
export function podDeviceDir(root: string, uid: PodUid): string {
  return path.join(podDir(root, uid), 'volumeDevices', escapePluginName(CSI_PLUGIN));
}

/** VolumeAttachment name for (handle, driver, node): `csi-<sha256(handle+driver+node)>` (getAttachmentName). */
export function attachmentName(handle: string, driver: string, node: string): string {
  return `csi-${sha256Hex(handle + driver + node)}`;
}
