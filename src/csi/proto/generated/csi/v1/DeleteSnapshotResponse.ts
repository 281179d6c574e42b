// Original file: src/csi/proto/csi.proto

export interface DeleteSnapshotResponse {}

export interface DeleteSnapshotResponse__Output {}
