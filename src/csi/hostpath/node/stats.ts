import { isMountPoint } from '../../../mount/mountinfo.js';
import type { NodeGetVolumeStatsRequest__Output, NodeGetVolumeStatsResponse, VolumeUsage } from '../../proto/types.js';
import type { HostpathDriver } from '../driver.js';
import { missing, notFound } from '../errors.js';
import { directoryUsage, exists, filesystemStats } from '../fsops.js';

export async function nodeGetVolumeStats(
  d: HostpathDriver,
  req: NodeGetVolumeStatsRequest__Output,
): Promise<NodeGetVolumeStatsResponse> {
  if (!req.volumeId) throw missing('volume_id');
  if (!req.volumePath) throw missing('volume_path');
  const v = d.getVolume(req.volumeId);
  if (!(await exists(req.volumePath))) throw notFound(`volume_path ${req.volumePath} does not exist`);
  const condition = await d.condition(v);
  if (condition.abnormal) return { usage: [], volumeCondition: condition };
  let usage: VolumeUsage[];
  if (v.fsType) {
    // The volume's own filesystem: statfs of the path is the truth, overhead and all.
    if (!(await isMountPoint(req.volumePath)))
      throw notFound(`volume_path ${req.volumePath} is not a mount of volume ${v.id}`);
    const fs = await filesystemStats(req.volumePath);
    usage = [
      { unit: 'BYTES', total: fs.totalBytes, used: fs.usedBytes, available: fs.availableBytes },
      { unit: 'INODES', total: fs.totalInodes, used: fs.totalInodes - fs.freeInodes, available: fs.freeInodes },
    ];
  } else if (v.kind === 'block') {
    usage = [{ unit: 'BYTES', total: v.capacityBytes }];
  } else {
    const [u, fs] = await Promise.all([directoryUsage(d.volumePath(v.id)), filesystemStats(d.volumePath(v.id))]);
    const available = Math.max(0, Math.min(v.capacityBytes - u.usedBytes, fs.availableBytes));
    usage = [
      { unit: 'BYTES', total: v.capacityBytes, used: u.usedBytes, available },
      { unit: 'INODES', total: fs.totalInodes, used: u.usedInodes, available: fs.freeInodes },
    ];
  }
  return { usage, volumeCondition: condition };
}
