// Original file: src/csi/proto/csi.proto

export interface DeleteVolumeRequest {
  volumeId?: string;
  secrets?: { [key: string]: string };
}

export interface DeleteVolumeRequest__Output {
  volumeId: string;
  secrets: { [key: string]: string };
}
