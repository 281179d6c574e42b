// Original file: src/csi/proto/csi.proto

export interface VolumeCondition {
  abnormal?: boolean;
  message?: string;
}

export interface VolumeCondition__Output {
  abnormal: boolean;
  message: string;
}
