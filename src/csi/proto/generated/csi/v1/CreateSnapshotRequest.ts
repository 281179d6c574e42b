// Original file: src/csi/proto/csi.proto

export interface CreateSnapshotRequest {
  sourceVolumeId?: string;
  name?: string;
  secrets?: { [key: string]: string };
  parameters?: { [key: string]: string };
}

export interface CreateSnapshotRequest__Output {
  sourceVolumeId: string;
  name: string;
  secrets: { [key: string]: string };
  parameters: { [key: string]: string };
}
