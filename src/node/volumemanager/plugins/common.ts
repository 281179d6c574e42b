import { totalmem } from 'node:os';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { bytesOf } from '../../../kube/quantity.js';
import type { VolumeToMount } from '../cache/desired-state.js';
import type { OperationContext } from '../operations/context.js';
import { subPathDir } from '../operations/paths.js';
import { mountSubPath } from '../subpath/subpath.js';

/** Bytes of a quantity as a number, or undefined when absent or unparsable. */
export function quantityOrUndefined(q: string | undefined): number | undefined {
  const b = bytesOf(q);
  return b === undefined ? undefined : Number(b);
}

/** resource.PodLimits for memory: the containers' limits summed, or an init container's if larger; 0 when none. */
export function podMemoryLimitBytes(pod: Pod): number {
  const lim = (c: { resources?: { limits?: Record<string, string> } }): number =>
    quantityOrUndefined(c.resources?.limits?.['memory']) ?? 0;
  const sum = (pod.spec?.containers ?? []).reduce((a, c) => a + lim(c), 0);
  return Math.max(sum, ...(pod.spec?.initContainers ?? []).map(lim));
}

/**
 * kubelet calculateEmptyDirMemorySize: a memory-backed volume is sized by the smallest of node
 * memory (allocatable), the pod's memory limit and the volume's own sizeLimit.
 */
export function memoryVolumeBytes(pod: Pod, sizeLimit?: number, nodeBytes: number = totalmem()): number {
  let size = nodeBytes;
  const podLimit = podMemoryLimitBytes(pod);
  if (podLimit > 0 && podLimit < size) size = podLimit;
  if (sizeLimit !== undefined && sizeLimit > 0 && sizeLimit < size) size = sizeLimit;
  return size;
}

/** Each container's subPath of the volume, bind-mounted under `volume-subpaths/` (opened without following symlinks out). */
export async function setUpSubPaths(
  ctx: OperationContext,
  t: VolumeToMount,
  volumeRoot: string,
  readOnly = false,
): Promise<void> {
  for (const sp of t.subPaths) {
    await mountSubPath({
      volumeRoot,
      subPath: sp.subPath,
      target: subPathDir(ctx.rootDir, t.pod.uid, t.outerSpecName, sp.container, sp.index),
      readOnly: sp.readOnly || readOnly,
    });
  }
}
