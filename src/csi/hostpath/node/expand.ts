import { findLoopByBackingFile, refreshLoopCapacity } from '../../../mount/loop.js';
import { mountsOfSource } from '../../../mount/mountinfo.js';
import type { NodeExpandVolumeRequest__Output, NodeExpandVolumeResponse } from '../../proto/types.js';
import { crashPoint } from '../crash.js';
import type { HostpathDriver } from '../driver.js';
import { failedPrecondition, missing, notFound } from '../errors.js';
import { growMounted } from '../filesystem.js';
import { exists } from '../fsops.js';
import { parseCapability } from '../validate.js';
import { fsTypeOf } from './staging.js';

/** NodeExpandVolume: records nothing; every step grows to what the device holds, so a retry finishes it. */
export async function nodeExpandVolume(
  d: HostpathDriver,
  req: NodeExpandVolumeRequest__Output,
): Promise<NodeExpandVolumeResponse> {
  if (!req.volumeId) throw missing('volume_id');
  if (!req.volumePath) throw missing('volume_path');
  return d.locks.run(`vol:${req.volumeId}`, async () => {
    const v = d.getVolume(req.volumeId);
    if (!(await exists(req.volumePath))) throw notFound(`volume_path ${req.volumePath} does not exist`);
    if (req.volumeCapability) {
      const cap = parseCapability(req.volumeCapability, 'volume_capability');
      if (cap.kind !== v.kind)
        throw failedPrecondition(`volume_capability: volume ${v.id} is a ${v.kind} volume, not ${cap.kind}`);
    }
    if (v.fsType) {
      const fsType = fsTypeOf(v);
      const devs = await findLoopByBackingFile(d.volumePath(v.id), { readOnly: false });
      if (devs.length === 0)
        throw failedPrecondition(`volume ${v.id} is not staged on this node: no filesystem to grow`);
      // The device first (it caps what the filesystem can see), then the mounted filesystem online.
      for (const dev of devs) {
        await refreshLoopCapacity(dev);
        crashPoint('NodeExpandVolume:device-refreshed');
        const mounted = await mountsOfSource(dev);
        if (mounted.length === 0)
          throw failedPrecondition(`volume ${v.id}'s filesystem is not mounted on this node (stage it first)`);
        await growMounted(dev, mounted[0]!.mountPoint, fsType);
      }
      d.log.info('filesystem expanded', { volume: v.id, bytes: v.capacityBytes });
    } else if (v.kind === 'block') {
      for (const dev of await findLoopByBackingFile(d.volumePath(v.id))) {
        await refreshLoopCapacity(dev);
        crashPoint('NodeExpandVolume:device-refreshed');
      }
    }
    return { capacityBytes: v.capacityBytes };
  });
}
