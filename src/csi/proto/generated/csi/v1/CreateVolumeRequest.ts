// Original file: src/csi/proto/csi.proto

import type {
  CapacityRange as _csi_v1_CapacityRange,
  CapacityRange__Output as _csi_v1_CapacityRange__Output,
} from '../../csi/v1/CapacityRange.js';
import type {
  VolumeCapability as _csi_v1_VolumeCapability,
  VolumeCapability__Output as _csi_v1_VolumeCapability__Output,
} from '../../csi/v1/VolumeCapability.js';
import type {
  VolumeContentSource as _csi_v1_VolumeContentSource,
  VolumeContentSource__Output as _csi_v1_VolumeContentSource__Output,
} from '../../csi/v1/VolumeContentSource.js';
import type {
  TopologyRequirement as _csi_v1_TopologyRequirement,
  TopologyRequirement__Output as _csi_v1_TopologyRequirement__Output,
} from '../../csi/v1/TopologyRequirement.js';

export interface CreateVolumeRequest {
  name?: string;
  capacityRange?: _csi_v1_CapacityRange | null;
  volumeCapabilities?: _csi_v1_VolumeCapability[];
  parameters?: { [key: string]: string };
  secrets?: { [key: string]: string };
  volumeContentSource?: _csi_v1_VolumeContentSource | null;
  accessibilityRequirements?: _csi_v1_TopologyRequirement | null;
  mutableParameters?: { [key: string]: string };
}

export interface CreateVolumeRequest__Output {
  name: string;
  capacityRange: _csi_v1_CapacityRange__Output | null;
  volumeCapabilities: _csi_v1_VolumeCapability__Output[];
  parameters: { [key: string]: string };
  secrets: { [key: string]: string };
  volumeContentSource: _csi_v1_VolumeContentSource__Output | null;
  accessibilityRequirements: _csi_v1_TopologyRequirement__Output | null;
  mutableParameters: { [key: string]: string };
}
