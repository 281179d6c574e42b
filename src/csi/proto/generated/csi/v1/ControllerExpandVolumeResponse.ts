// Original file: src/csi/proto/csi.proto

import type { Long } from '@grpc/proto-loader';

export interface ControllerExpandVolumeResponse {
  capacityBytes?: number | string | Long;
  nodeExpansionRequired?: boolean;
}

export interface ControllerExpandVolumeResponse__Output {
  capacityBytes: number;
  nodeExpansionRequired: boolean;
}
