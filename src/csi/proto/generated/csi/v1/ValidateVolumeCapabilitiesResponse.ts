// Original file: src/csi/proto/csi.proto

import type {
  VolumeCapability as _csi_v1_VolumeCapability,
  VolumeCapability__Output as _csi_v1_VolumeCapability__Output,
} from '../../csi/v1/VolumeCapability.js';

export interface _csi_v1_ValidateVolumeCapabilitiesResponse_Confirmed {
  volumeContext?: { [key: string]: string };
  volumeCapabilities?: _csi_v1_VolumeCapability[];
  parameters?: { [key: string]: string };
  mutableParameters?: { [key: string]: string };
}

export interface _csi_v1_ValidateVolumeCapabilitiesResponse_Confirmed__Output {
  volumeContext: { [key: string]: string };
  volumeCapabilities: _csi_v1_VolumeCapability__Output[];
  parameters: { [key: string]: string };
  mutableParameters: { [key: string]: string };
}

export interface ValidateVolumeCapabilitiesResponse {
  confirmed?: _csi_v1_ValidateVolumeCapabilitiesResponse_Confirmed | null;
  message?: string;
}

export interface ValidateVolumeCapabilitiesResponse__Output {
  confirmed: _csi_v1_ValidateVolumeCapabilitiesResponse_Confirmed__Output | null;
  message: string;
}
