// Original file: src/csi/proto/csi.proto

import type {
  VolumeUsage as _csi_v1_VolumeUsage,
  VolumeUsage__Output as _csi_v1_VolumeUsage__Output,
} from '../../csi/v1/VolumeUsage.js';
import type {
  VolumeCondition as _csi_v1_VolumeCondition,
  VolumeCondition__Output as _csi_v1_VolumeCondition__Output,
} from '../../csi/v1/VolumeCondition.js';

export interface NodeGetVolumeStatsResponse {
  usage?: _csi_v1_VolumeUsage[];
  volumeCondition?: _csi_v1_VolumeCondition | null;
}

export interface NodeGetVolumeStatsResponse__Output {
  usage: _csi_v1_VolumeUsage__Output[];
  volumeCondition: _csi_v1_VolumeCondition__Output | null;
}
