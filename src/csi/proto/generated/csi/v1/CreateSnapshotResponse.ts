// Original file: src/csi/proto/csi.proto

import type {
  Snapshot as _csi_v1_Snapshot,
  Snapshot__Output as _csi_v1_Snapshot__Output,
} from '../../csi/v1/Snapshot.js';

export interface CreateSnapshotResponse {
  snapshot?: _csi_v1_Snapshot | null;
}

export interface CreateSnapshotResponse__Output {
  snapshot: _csi_v1_Snapshot__Output | null;
}
