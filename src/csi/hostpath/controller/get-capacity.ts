import type { GetCapacityRequest__Output, GetCapacityResponse } from '../../proto/types.js';
import { TOPOLOGY_KEY, type HostpathDriver } from '../driver.js';
import { filesystemStats } from '../fsops.js';
import { parseCapability, unsupportedReason } from '../validate.js';
import { fsTypeMismatch } from './checks.js';

export async function getCapacity(d: HostpathDriver, req: GetCapacityRequest__Output): Promise<GetCapacityResponse> {
  const { config } = d;
  const segs = req.accessibleTopology?.segments;
  if (segs && segs[TOPOLOGY_KEY] !== undefined && segs[TOPOLOGY_KEY] !== config.nodeId) return { availableCapacity: 0 };
  for (const [i, c] of req.volumeCapabilities.entries()) {
    const p = parseCapability(c, `volume_capabilities[${i}]`);
    if (unsupportedReason(p) || (await fsTypeMismatch(p, `volume_capabilities[${i}].mount.fs_type`)))
      return { availableCapacity: 0 };
  }
  const available =
    config.capacityBytes !== undefined
      ? Math.max(0, config.capacityBytes - d.allocatedBytes())
      : (await filesystemStats(config.stateDir)).availableBytes;
  return { availableCapacity: available, maximumVolumeSize: { value: available } };
}
