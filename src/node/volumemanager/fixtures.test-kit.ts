import { csiVolumeName, podUid, type PodRef, type VolumeName, type VolumeSpec } from './types.js';
import type { PodVolumeInput } from './cache/desired-state.js';

/** Test fixtures shared by the volume manager's unit tests. */
export function csiSpec(handle: string, o: Partial<VolumeSpec> = {}): VolumeSpec {
  return {
    plugin: 'kubernetes.io/csi',
    specName: `pv-${handle}`,
    mode: 'Filesystem',
    readOnly: false,
    csi: {
      driver: 'hostpath.csi.k8s.io',
      volumeHandle: handle,
      fsType: '',
      mountOptions: [],
      volumeAttributes: {},
      accessMode: 'SINGLE_NODE_WRITER',
    },
    ...o,
  };
}

export function vol(handle: string): VolumeName {
  return csiVolumeName('hostpath.csi.k8s.io', handle);
}

export function pod(name: string): PodRef {
  return { uid: podUid(`uid-${name}`), namespace: 'default', name };
}

export function want(p: string, handle: string, o: Partial<PodVolumeInput> = {}): PodVolumeInput {
  return {
    pod: pod(p),
    volume: vol(handle),
    outerSpecName: 'data',
    spec: csiSpec(handle),
    pluginIsAttachable: false,
    ...o,
  };
}
