import { mkdir, stat } from 'node:fs/promises';
import type { MountedPod } from '../cache/actual-state.js';
import type { VolumeToMount } from '../cache/desired-state.js';
import type { OperationContext } from './context.js';
import { podVolumeDir } from './paths.js';
import { removeTreeSafely } from './safe-remove.js';
import { InvalidError } from '../../../util/errors.js';

/** emptyDir: a directory in the pod's volumes dir, created world-writable as the kubelet does. */
export async function emptyDirSetUp(ctx: OperationContext, t: VolumeToMount): Promise<void> {
  const dir = podVolumeDir(ctx.rootDir, t.pod.uid, 'kubernetes.io/empty-dir', t.spec.specName);
  await mkdir(dir, { recursive: true, mode: 0o777 });
  ctx.asw.markVolumeMounted({ volume: t.volume, pod: t.pod, outerSpecName: t.outerSpecName, spec: t.spec, state: 'Mounted', hostPath: dir });
}

export async function emptyDirTearDown(ctx: OperationContext, m: MountedPod): Promise<void> {
  await removeTreeSafely(m.hostPath);
  ctx.asw.markVolumeUnmounted(m.pod.uid, m.volume);
}

/** hostPath: the path itself (nothing mounted); DirectoryOrCreate creates it, other types must exist. */
export async function hostPathSetUp(ctx: OperationContext, t: VolumeToMount, createDir: boolean): Promise<void> {
  const p = t.spec.hostPath;
  if (!p) throw new InvalidError(`hostPath volume "${t.outerSpecName}" has no path`);
  if (createDir) await mkdir(p, { recursive: true, mode: 0o755 });
  else await stat(p).catch(() => {
    throw new InvalidError(`hostPath type check failed: ${p} does not exist`);
  });
  ctx.asw.markVolumeMounted({ volume: t.volume, pod: t.pod, outerSpecName: t.outerSpecName, spec: t.spec, state: 'Mounted', hostPath: p });
}

export function hostPathTearDown(ctx: OperationContext, m: MountedPod): void {
  ctx.asw.markVolumeUnmounted(m.pod.uid, m.volume);
}
