import type {
  ValidateVolumeCapabilitiesRequest__Output,
  ValidateVolumeCapabilitiesResponse,
} from '../../proto/types.js';
import type { HostpathDriver } from '../driver.js';
import { missing } from '../errors.js';
import { parseCapability, unsupportedReason } from '../validate.js';
import { fsTypeMismatch } from './checks.js';

export async function validateVolumeCapabilities(
  d: HostpathDriver,
  req: ValidateVolumeCapabilitiesRequest__Output,
): Promise<ValidateVolumeCapabilitiesResponse> {
  if (!req.volumeId) throw missing('volume_id');
  if (req.volumeCapabilities.length === 0) throw missing('volume_capabilities');
  const v = d.getVolume(req.volumeId);
  const caps = req.volumeCapabilities.map((c, i) => parseCapability(c, `volume_capabilities[${i}]`));
  for (const [i, c] of caps.entries()) {
    if (c.kind !== v.kind) return { message: `volume ${v.id} is a ${v.kind} volume, not ${c.kind}` };
    const why = unsupportedReason(c) ?? (await fsTypeMismatch(c, `volume_capabilities[${i}].mount.fs_type`, v));
    if (why) return { message: why };
  }
  return {
    confirmed: {
      volumeContext: req.volumeContext,
      volumeCapabilities: req.volumeCapabilities,
      parameters: req.parameters,
      mutableParameters: req.mutableParameters,
    },
    message: '',
  };
}
