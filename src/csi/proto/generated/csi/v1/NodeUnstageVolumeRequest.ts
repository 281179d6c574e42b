// Original file: src/csi/proto/csi.proto

export interface NodeUnstageVolumeRequest {
  volumeId?: string;
  stagingTargetPath?: string;
}

export interface NodeUnstageVolumeRequest__Output {
  volumeId: string;
  stagingTargetPath: string;
}
