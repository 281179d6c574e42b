// Original file: src/csi/proto/csi.proto

export interface ListSnapshotsRequest {
  maxEntries?: number;
  startingToken?: string;
  sourceVolumeId?: string;
  snapshotId?: string;
  secrets?: { [key: string]: string };
}

export interface ListSnapshotsRequest__Output {
  maxEntries: number;
  startingToken: string;
  sourceVolumeId: string;
  snapshotId: string;
  secrets: { [key: string]: string };
}
