import { invalidArgument } from '../errors.js';
import { fsTypeUnsupportedReason } from '../filesystem.js';
import type { AccessKind, VolumeRecord } from '../state.js';
import type { ParsedCapability } from '../validate.js';

export function checkKind(v: VolumeRecord, kind: AccessKind, field: string): void {
  if (v.kind !== kind) throw invalidArgument(`${field}: volume ${v.id} is a ${v.kind} volume, not ${kind}`);
}

/**
 * The fsType a CreateVolume asks for: '' (a directory volume, as the upstream hostpath driver
 * keeps every mount volume) or one supported filesystem, the same in every capability.
 */
export async function requestedFsType(caps: readonly ParsedCapability[]): Promise<string> {
  const types = new Set(caps.map((c) => c.fsType).filter((t) => t !== ''));
  if (types.size > 1)
    throw invalidArgument(`volume_capabilities ask for different mount.fs_type values: ${[...types].join(', ')}`);
  const i = caps.findIndex((c) => c.fsType !== '');
  if (i < 0) return '';
  const why = await fsTypeUnsupportedReason(caps[i]!.fsType, `volume_capabilities[${i}].mount.fs_type`);
  if (why) throw invalidArgument(why);
  return caps[i]!.fsType;
}

/** Why a volume cannot be used with this capability's fs_type (ValidateVolumeCapabilities, GetCapacity). */
export async function fsTypeMismatch(
  c: ParsedCapability,
  field: string,
  v?: VolumeRecord,
): Promise<string | undefined> {
  if (c.fsType === '') return undefined;
  const why = await fsTypeUnsupportedReason(c.fsType, field);
  if (why || !v) return why;
  if (v.fsType !== c.fsType)
    return `volume ${v.id} ${v.fsType ? `has a ${v.fsType} filesystem` : 'is a directory volume without a filesystem'}, not ${c.fsType}`;
  return undefined;
}
