import type { ControllerExpandVolumeRequest__Output, ControllerExpandVolumeResponse } from '../../proto/types.js';
import { crashPoint } from '../crash.js';
import type { HostpathDriver } from '../driver.js';
import { missing, resourceExhausted } from '../errors.js';
import { growFile } from '../fsops.js';
import { dataLayout } from '../state.js';
import { chooseCapacity, parseCapability } from '../validate.js';
import { commit } from '../intent.js';
import { checkKind } from './checks.js';

/**
 * ControllerExpandVolume. Crash-consistent: the new size is recorded durably first and the file
 * grown after; the file is grown to the recorded size on every call (a no-op once it is) and at
 * start-up, so a crash in between is finished by the retry or the restart, never lost.
 */
export async function controllerExpandVolume(
  d: HostpathDriver,
  req: ControllerExpandVolumeRequest__Output,
): Promise<ControllerExpandVolumeResponse> {
  if (!req.volumeId) throw missing('volume_id');
  if (!req.capacityRange) throw missing('capacity_range');
  const { config } = d;
  return d.locks.run(`vol:${req.volumeId}`, async () => {
    const v = d.getVolume(req.volumeId);
    if (req.volumeCapability)
      checkKind(v, parseCapability(req.volumeCapability, 'volume_capability').kind, 'volume_capability');
    const size = chooseCapacity(req.capacityRange, config.capacityBytes);
    const layout = dataLayout(v);
    // Never shrink; a smaller request is already satisfied.
    if (size > v.capacityBytes) {
      if (config.capacityBytes !== undefined && d.allocatedBytes() - v.capacityBytes + size > config.capacityBytes) {
        throw resourceExhausted(`not enough capacity to grow volume ${v.id} to ${size} bytes`);
      }
      const before = v.capacityBytes;
      await commit(
        d,
        () => (v.capacityBytes = size),
        () => (v.capacityBytes = before),
      );
      crashPoint('ControllerExpandVolume:recorded');
      d.log.info('volume expanded', { id: v.id, bytes: size });
    } else if (layout === 'directory') {
      return { capacityBytes: v.capacityBytes, nodeExpansionRequired: false };
    }
    if (layout === 'file') await growFile(d.volumePath(v.id), v.capacityBytes);
    crashPoint('ControllerExpandVolume:grown');
    // A loop device must re-read its size on the node (NodeExpandVolume), and a filesystem
    // volume's filesystem grow into it; a directory has no size to grow. A repeated call says the
    // same: its first reply may have been lost with the process.
    return { capacityBytes: v.capacityBytes, nodeExpansionRequired: layout === 'file' };
  });
}
