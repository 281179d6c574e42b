// Original file: src/csi/proto/csi.proto

export interface DeleteSnapshotRequest {
  snapshotId?: string;
  secrets?: { [key: string]: string };
}

export interface DeleteSnapshotRequest__Output {
  snapshotId: string;
  secrets: { [key: string]: string };
}
