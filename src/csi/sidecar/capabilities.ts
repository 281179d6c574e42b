/**
 * Volume capabilities from Kubernetes access modes and volume mode, as the external-provisioner
 * (one capability per access mode, for CreateVolume) and the external-attacher (one capability
 * for the PV, for ControllerPublish) build them.
 */
import type { PersistentVolume } from 'kubernetes-types/core/v1.js';
import type { AccessModeName, VolumeCapability } from '../proto/types.js';
import { InvalidError } from '../../util/errors.js';

export const ACCESS_MODES = ['ReadWriteOnce', 'ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOncePod'] as const;
export type AccessMode = (typeof ACCESS_MODES)[number];

function isAccessMode(s: string): s is AccessMode {
  return (ACCESS_MODES as readonly string[]).includes(s);
}

/**
 * One Kubernetes access mode as CSI. With SINGLE_NODE_MULTI_WRITER the driver understands the
 * finer single-node modes: RWO = several writers on one node, RWOP = one writer.
 */
export function csiAccessMode(mode: AccessMode, singleNodeMultiWriter: boolean): AccessModeName {
  switch (mode) {
    case 'ReadWriteOnce':
      return singleNodeMultiWriter ? 'SINGLE_NODE_MULTI_WRITER' : 'SINGLE_NODE_WRITER';
    case 'ReadWriteOncePod':
      return singleNodeMultiWriter ? 'SINGLE_NODE_SINGLE_WRITER' : 'SINGLE_NODE_WRITER';
    case 'ReadOnlyMany':
      return 'MULTI_NODE_READER_ONLY';
    case 'ReadWriteMany':
      return 'MULTI_NODE_MULTI_WRITER';
  }
}

export interface CapabilityInput {
  readonly accessModes: readonly string[];
  /** `Block` or `Filesystem` (the default). */
  readonly volumeMode?: string;
  readonly fsType?: string;
  readonly mountOptions?: readonly string[];
  readonly singleNodeMultiWriter: boolean;
}

function accessType(i: CapabilityInput): Pick<VolumeCapability, 'block' | 'mount'> {
  if (i.volumeMode === 'Block') return { block: {} };
  return { mount: { fsType: i.fsType ?? '', mountFlags: [...(i.mountOptions ?? [])] } };
}

function parseModes(modes: readonly string[]): AccessMode[] {
  if (modes.length === 0) throw new InvalidError('at least one access mode is required');
  return modes.map((m) => {
    if (!isAccessMode(m)) throw new InvalidError(`unsupported access mode ${JSON.stringify(m)}`);
    return m;
  });
}

/** CreateVolume's volume_capabilities: one per access mode of the claim. */
export function provisionCapabilities(i: CapabilityInput): VolumeCapability[] {
  return parseModes(i.accessModes).map((m) => ({
    ...accessType(i),
    accessMode: { mode: csiAccessMode(m, i.singleNodeMultiWriter) },
  }));
}

/**
 * ControllerPublish / ControllerExpand's single capability for a PV with possibly several access
 * modes: the widest one wins (RWX, then ROX), as the attacher chooses.
 */
export function publishCapability(i: CapabilityInput): VolumeCapability {
  const modes = parseModes(i.accessModes);
  const pick: AccessMode = modes.includes('ReadWriteMany')
    ? 'ReadWriteMany'
    : modes.includes('ReadOnlyMany') && modes.length === 1
      ? 'ReadOnlyMany'
      : modes.includes('ReadWriteOncePod')
        ? 'ReadWriteOncePod'
        : modes.includes('ReadWriteOnce')
          ? 'ReadWriteOnce'
          : 'ReadOnlyMany';
  return { ...accessType(i), accessMode: { mode: csiAccessMode(pick, i.singleNodeMultiWriter) } };
}

/** The capability of a provisioned CSI PV (fsType and mount options from its spec). */
export function pvCapability(pv: PersistentVolume, singleNodeMultiWriter: boolean): VolumeCapability {
  return publishCapability({
    accessModes: pv.spec?.accessModes ?? [],
    volumeMode: pv.spec?.volumeMode,
    fsType: pv.spec?.csi?.fsType,
    mountOptions: pv.spec?.mountOptions,
    singleNodeMultiWriter,
  });
}
