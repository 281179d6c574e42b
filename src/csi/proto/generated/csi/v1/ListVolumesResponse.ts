// Original file: src/csi/proto/csi.proto

import type {
  VolumeCondition as _csi_v1_VolumeCondition,
  VolumeCondition__Output as _csi_v1_VolumeCondition__Output,
} from '../../csi/v1/VolumeCondition.js';
import type { Volume as _csi_v1_Volume, Volume__Output as _csi_v1_Volume__Output } from '../../csi/v1/Volume.js';

export interface _csi_v1_ListVolumesResponse_Entry {
  volume?: _csi_v1_Volume | null;
  status?: _csi_v1_ListVolumesResponse_VolumeStatus | null;
}

export interface _csi_v1_ListVolumesResponse_Entry__Output {
  volume: _csi_v1_Volume__Output | null;
  status: _csi_v1_ListVolumesResponse_VolumeStatus__Output | null;
}

export interface _csi_v1_ListVolumesResponse_VolumeStatus {
  publishedNodeIds?: string[];
  volumeCondition?: _csi_v1_VolumeCondition | null;
}

export interface _csi_v1_ListVolumesResponse_VolumeStatus__Output {
  publishedNodeIds: string[];
  volumeCondition: _csi_v1_VolumeCondition__Output | null;
}

export interface ListVolumesResponse {
  entries?: _csi_v1_ListVolumesResponse_Entry[];
  nextToken?: string;
}

export interface ListVolumesResponse__Output {
  entries: _csi_v1_ListVolumesResponse_Entry__Output[];
  nextToken: string;
}
