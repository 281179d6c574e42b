// Original file: src/csi/proto/csi.proto

export interface DeleteVolumeResponse {}

export interface DeleteVolumeResponse__Output {}
