// Original file: src/csi/proto/csi.proto

import type { Long } from '@grpc/proto-loader';

export interface CapacityRange {
  requiredBytes?: number | string | Long;
  limitBytes?: number | string | Long;
}

export interface CapacityRange__Output {
  requiredBytes: number;
  limitBytes: number;
}
