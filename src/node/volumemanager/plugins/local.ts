import { lstat, mkdir, readlink, rmdir, stat, symlink, unlink } from 'node:fs/promises';
import path from 'node:path';
import { bindMount, unmountAll } from '../../../mount/mount.js';
import { findMount } from '../../../mount/mountinfo.js';
import { InvalidError } from '../../../util/errors.js';
import { podDir, podPluginDir, podVolumeDir, subPathDir } from '../operations/paths.js';
import { cleanSubPaths } from '../subpath/subpath.js';
import { escapePluginName, volumeName, type PodUid } from '../types.js';
import { setUpSubPaths } from './common.js';
import { listDir } from './fsutil.js';
import type { VolumePlugin } from './plugin.js';
import { validHostPath } from './host-path.js';

const PLUGIN = 'kubernetes.io/local-volume';

/** The pod's device link of a local block PV: `pods/<uid>/volumeDevices/kubernetes.io~local-volume/<pv>`. */
export function localDeviceLink(root: string, uid: PodUid, pv: string): string {
  return path.join(podDir(root, uid), 'volumeDevices', escapePluginName(PLUGIN), pv);
}

const missing = (e: unknown): boolean => (e as NodeJS.ErrnoException).code === 'ENOENT';

/**
 * `local` PVs: a disk, partition or directory of this host. Filesystem: the path bind-mounted at
 * the pod's volume directory; Block: the device linked into the pod's volumeDevices. The volume
 * is named by the PV (pods share it); binding and scheduling follow the PV's nodeAffinity.
 */
export const localPlugin: VolumePlugin = {
  name: PLUGIN,
  canSupport: (src) => src.kind === 'pv' && src.pv.spec?.local !== undefined,
  resolve(src) {
    if (src.kind !== 'pv') return { problem: 'local volumes are PersistentVolumes only' };
    const pvName = src.pv.metadata?.name ?? '';
    const p = src.pv.spec!.local!.path;
    const bad = validHostPath(p);
    if (bad)
      return { problem: `MountVolume.SetUp failed for volume "${pvName}" : ${bad.replace('hostPath', 'local path')}` };
    return {
      volume: volumeName(`${PLUGIN}/${pvName}`),
      pluginIsAttachable: false,
      spec: {
        plugin: PLUGIN,
        specName: pvName,
        mode: src.pv.spec?.volumeMode === 'Block' ? 'Block' : 'Filesystem',
        readOnly: src.volume.persistentVolumeClaim?.readOnly === true,
        hostPath: p,
      },
    };
  },
  requiresDeviceMount: () => false,
  async setUp(ctx, t) {
    const p = t.spec.hostPath ?? '';
    const st = await stat(p).catch((e: unknown) => {
      if (missing(e)) throw new InvalidError(`path "${p}" does not exist`);
      throw e;
    });
    if (t.spec.mode === 'Block') {
      if (!st.isBlockDevice()) throw new InvalidError(`local volume ${t.spec.specName}: ${p} is not a block device`);
      const link = localDeviceLink(ctx.rootDir, t.pod.uid, t.spec.specName);
      await mkdir(path.dirname(link), { recursive: true, mode: 0o750 });
      const cur = await readlink(link).catch(() => undefined);
      if (cur !== p) {
        try {
          await unlink(link);
        } catch (e) {
          if (!missing(e)) throw e;
        }
        await symlink(p, link);
      }
      ctx.asw.markVolumeMounted({
        volume: t.volume,
        pod: t.pod,
        outerSpecName: t.outerSpecName,
        spec: t.spec,
        state: 'Mounted',
        hostPath: link,
      });
      return;
    }
    if (!st.isDirectory()) throw new InvalidError(`local volume ${t.spec.specName}: ${p} is not a directory`);
    const dir = podVolumeDir(ctx.rootDir, t.pod.uid, PLUGIN, t.spec.specName);
    await mkdir(dir, { recursive: true, mode: 0o750 });
    if ((await findMount(dir))?.mountPoint !== dir) await bindMount(p, dir, { readOnly: t.spec.readOnly });
    await setUpSubPaths(ctx, t, dir, t.spec.readOnly);
    ctx.asw.markVolumeMounted({
      volume: t.volume,
      pod: t.pod,
      outerSpecName: t.outerSpecName,
      spec: t.spec,
      state: 'Mounted',
      hostPath: dir,
    });
  },
  async tearDown(ctx, m) {
    await cleanSubPaths(subPathDir(ctx.rootDir, m.pod.uid, m.outerSpecName));
    const st = await lstat(m.hostPath).catch(() => undefined);
    if (st?.isSymbolicLink()) await unlink(m.hostPath);
    else if (st) {
      if ((await findMount(m.hostPath))?.mountPoint === m.hostPath) await unmountAll(m.hostPath);
      if ((await findMount(m.hostPath))?.mountPoint === m.hostPath) throw new Error(`${m.hostPath} is still mounted`);
      await rmdir(m.hostPath); // never recursive: this is the user's disk if the unmount did not happen
    }
    ctx.asw.markVolumeUnmounted(m.pod.uid, m.volume);
  },
  async reconstruct({ rootDir, asw }, uid) {
    let n = 0;
    const pod = { uid, namespace: '', name: '' };
    const found = [
      ...(await listDir(podPluginDir(rootDir, uid, PLUGIN))).map((pv) => ({
        pv,
        hostPath: podVolumeDir(rootDir, uid, PLUGIN, pv),
        mode: 'Filesystem' as const,
      })),
      ...(await listDir(path.dirname(localDeviceLink(rootDir, uid, 'x')))).map((pv) => ({
        pv,
        hostPath: localDeviceLink(rootDir, uid, pv),
        mode: 'Block' as const,
      })),
    ];
    for (const f of found) {
      const name = volumeName(`${PLUGIN}/${f.pv}`);
      const spec = { plugin: PLUGIN, specName: f.pv, mode: f.mode, readOnly: false } as const;
      asw.markVolumeAttached(name, spec, '');
      asw.markVolumeMounted({ volume: name, pod, outerSpecName: f.pv, spec, state: 'Uncertain', hostPath: f.hostPath });
      n++;
    }
    return n;
  },
};
