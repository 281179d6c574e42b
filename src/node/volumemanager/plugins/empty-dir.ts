import { chmod, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { mount, unmountAll } from '../../../mount/mount.js';
import { findMount } from '../../../mount/mountinfo.js';
import { podPluginDir, podVolumeDir, subPathDir } from '../operations/paths.js';
import type { MountedPod } from '../cache/actual-state.js';
import type { OperationContext } from '../operations/context.js';
import { applyFsGroup } from '../operations/fsgroup.js';
import { removeTreeSafely } from '../operations/safe-remove.js';
import { cleanSubPaths } from '../subpath/subpath.js';
import { volumeName, type EmptyDirSpec } from '../types.js';
import { memoryVolumeBytes, quantityOrUndefined, setUpSubPaths } from './common.js';
import { listDir } from './fsutil.js';
import type { VolumePlugin } from './plugin.js';

const PLUGIN = 'kubernetes.io/empty-dir';

/**
 * Makes `dir` a tmpfs of `sizeBytes` (mode 1777, as the kubelet mounts memory-backed volumes).
 * Idempotent: a tmpfs already there is kept.
 */
export async function setUpTmpfs(dir: string, sizeBytes: number | undefined): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o750 });
  if ((await findMount(dir))?.mountPoint === dir) return;
  await mount('tmpfs', dir, 'tmpfs', ['mode=1777', ...(sizeBytes !== undefined ? [`size=${sizeBytes}`] : [])]);
}

/**
 * The pod's volume directory of an emptyDir (and of the volumes the kubelet builds on one:
 * configMap, secret, downwardAPI, projected): a tmpfs of `memoryBytes` when memory-backed, else a
 * directory made world-writable whatever the umask (containers run as any user).
 */
export async function setUpVolumeDir(dir: string, memory: { readonly sizeBytes?: number } | undefined): Promise<void> {
  if (memory) return setUpTmpfs(dir, memory.sizeBytes);
  await mkdir(dir, { recursive: true });
  await chmod(dir, 0o777);
}

/** TearDown of such a volume: its subPaths, the tmpfs at it (if any), then the tree, never across another mount. */
export async function tearDownVolumeDir(ctx: OperationContext, m: MountedPod): Promise<void> {
  await cleanSubPaths(subPathDir(ctx.rootDir, m.pod.uid, m.outerSpecName));
  if ((await findMount(m.hostPath))?.mountPoint === m.hostPath) await unmountAll(m.hostPath);
  await removeTreeSafely(m.hostPath);
  ctx.asw.markVolumeUnmounted(m.pod.uid, m.volume);
}

export const emptyDirPlugin: VolumePlugin = {
  name: PLUGIN,
  canSupport: (src) => src.kind === 'inline' && src.volume.emptyDir !== undefined,
  resolve(src, env) {
    const v = src.volume;
    const e = v.emptyDir ?? {};
    const emptyDir: EmptyDirSpec =
      e.medium === 'Memory'
        ? { medium: 'Memory', sizeBytes: memoryVolumeBytes(env.pod, quantityOrUndefined(e.sizeLimit)) }
        : { medium: '' };
    return {
      volume: volumeName(`${PLUGIN}/${env.ref.uid}-${v.name}`),
      pluginIsAttachable: false,
      spec: { plugin: PLUGIN, specName: v.name, mode: 'Filesystem', readOnly: false, emptyDir },
    };
  },
  requiresDeviceMount: () => false,
  async setUp(ctx, t) {
    const dir = podVolumeDir(ctx.rootDir, t.pod.uid, PLUGIN, t.spec.specName);
    await setUpVolumeDir(dir, t.spec.emptyDir?.medium === 'Memory' ? t.spec.emptyDir : undefined);
    // The kubelet sets an emptyDir's ownership to the pod's fsGroup (group rw, setgid directories).
    if (t.fsGroup !== undefined)
      await applyFsGroup(dir, t.fsGroup, { ...(t.fsGroupChangePolicy ? { policy: t.fsGroupChangePolicy } : {}) });
    await setUpSubPaths(ctx, t, dir);
    ctx.asw.markVolumeMounted({
      volume: t.volume,
      pod: t.pod,
      outerSpecName: t.outerSpecName,
      spec: t.spec,
      state: 'Mounted',
      hostPath: dir,
    });
  },
  tearDown: (ctx, m) => tearDownVolumeDir(ctx, m),
  async reconstruct({ rootDir, asw }, uid) {
    const base = podPluginDir(rootDir, uid, PLUGIN);
    let n = 0;
    for (const specName of await listDir(base)) {
      const dir = path.join(base, specName);
      const onTmpfs = (await findMount(dir))?.mountPoint === dir;
      const name = volumeName(`${PLUGIN}/${uid}-${specName}`);
      const spec = {
        plugin: PLUGIN,
        specName,
        mode: 'Filesystem',
        readOnly: false,
        emptyDir: { medium: onTmpfs ? 'Memory' : '' },
      } as const;
      asw.markVolumeAttached(name, spec, '');
      // Uncertain: SetUp runs again when the pod still wants it (idempotent, remounts its subPaths).
      asw.markVolumeMounted({
        volume: name,
        pod: { uid, namespace: '', name: '' },
        outerSpecName: specName,
        spec,
        state: 'Uncertain',
        hostPath: dir,
      });
      n++;
    }
    return n;
  },
};
