// Original file: src/csi/proto/csi.proto

import type {
  VolumeCapability as _csi_v1_VolumeCapability,
  VolumeCapability__Output as _csi_v1_VolumeCapability__Output,
} from '../../csi/v1/VolumeCapability.js';

export interface NodeStageVolumeRequest {
  volumeId?: string;
  publishContext?: { [key: string]: string };
  stagingTargetPath?: string;
  volumeCapability?: _csi_v1_VolumeCapability | null;
  secrets?: { [key: string]: string };
  volumeContext?: { [key: string]: string };
}

export interface NodeStageVolumeRequest__Output {
  volumeId: string;
  publishContext: { [key: string]: string };
  stagingTargetPath: string;
  volumeCapability: _csi_v1_VolumeCapability__Output | null;
  secrets: { [key: string]: string };
  volumeContext: { [key: string]: string };
}
