import { detachLoop, findLoopByBackingFile } from '../../mount/loop.js';
import { mountsOfSource, mountsUnder } from '../../mount/mountinfo.js';
import type { HostpathDriver } from './driver.js';
import { failedPrecondition } from './errors.js';
import { exists, removeData } from './fsops.js';
import { dataLayout, type VolumeRecord } from './state.js';

/**
 * FAILED_PRECONDITION while something is mounted inside the volume's directory or from a loop
 * device of its file: removing the data then would destroy what is mounted, and detaching a
 * mounted loop device only marks it for autoclear.
 */
export async function refuseMountedData(
  d: HostpathDriver,
  v: Pick<VolumeRecord, 'id' | 'kind' | 'fsType'>,
): Promise<void> {
  const p = d.volumePath(v.id);
  const inside = await mountsUnder(p);
  if (inside.length > 0)
    throw failedPrecondition(`${p} still has mounts: ${inside.map((m) => m.mountPoint).join(', ')}`);
  if (dataLayout(v) !== 'file' || !(await exists(p))) return;
  for (const dev of await findLoopByBackingFile(p)) {
    const m = await mountsOfSource(dev);
    if (m.length > 0)
      throw failedPrecondition(
        `volume ${v.id} is still mounted from ${dev} at ${m.map((x) => x.mountPoint).join(', ')}`,
      );
  }
}

/**
 * Removes a volume's backing data, first detaching loop devices nothing records any more (e.g.
 * left by a crash: one would pin the deleted file). Refuses while anything is mounted from it
 * (refuseMountedData). Missing is success.
 */
export async function removeVolumeData(
  d: HostpathDriver,
  v: Pick<VolumeRecord, 'id' | 'kind' | 'fsType'>,
): Promise<void> {
  await refuseMountedData(d, v);
  const file = d.volumePath(v.id);
  if (dataLayout(v) === 'file' && (await exists(file))) {
    for (const dev of await findLoopByBackingFile(file)) await detachLoop(dev);
    const left = await findLoopByBackingFile(file);
    if (left.length > 0) throw failedPrecondition(`volume ${v.id} still has loop devices ${left.join(', ')}`);
  }
  await removeData(file);
}

/**
 * Detaches loop devices nothing needs any more: the read-write device while the volume is staged
 * or has a writable publication, the read-only one while it has a read-only publication.
 */
export async function releaseUnusedLoops(d: HostpathDriver, v: VolumeRecord): Promise<void> {
  if (dataLayout(v) !== 'file') return;
  const file = d.volumePath(v.id);
  if (!(await exists(file))) return;
  const pubs = Object.values(v.published);
  const staged = Object.keys(v.staged).length > 0;
  // A filesystem volume's publications are binds of its staged mount: all on the read-write device.
  const needRw = staged || (v.fsType ? pubs.length > 0 : pubs.some((p) => !p.readOnly));
  const needRo = !v.fsType && pubs.some((p) => p.readOnly);
  const detach = async (dev: string): Promise<void> => {
    // Detaching a mounted device only marks it for autoclear, hiding the leak: leave it and say so.
    const m = await mountsOfSource(dev);
    if (m.length > 0) {
      d.log.warn('loop device still mounted; not detached', {
        volume: v.id,
        device: dev,
        mounts: m.map((x) => x.mountPoint).join(', '),
      });
      return;
    }
    await detachLoop(dev);
  };
  if (!needRw) for (const dev of await findLoopByBackingFile(file, { readOnly: false })) await detach(dev);
  if (!needRo) for (const dev of await findLoopByBackingFile(file, { readOnly: true })) await detach(dev);
}
