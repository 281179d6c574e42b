// Original file: src/csi/proto/csi.proto

import type {
  VolumeCapability as _csi_v1_VolumeCapability,
  VolumeCapability__Output as _csi_v1_VolumeCapability__Output,
} from '../../csi/v1/VolumeCapability.js';
import type {
  Topology as _csi_v1_Topology,
  Topology__Output as _csi_v1_Topology__Output,
} from '../../csi/v1/Topology.js';

export interface GetCapacityRequest {
  volumeCapabilities?: _csi_v1_VolumeCapability[];
  parameters?: { [key: string]: string };
  accessibleTopology?: _csi_v1_Topology | null;
}

export interface GetCapacityRequest__Output {
  volumeCapabilities: _csi_v1_VolumeCapability__Output[];
  parameters: { [key: string]: string };
  accessibleTopology: _csi_v1_Topology__Output | null;
}
