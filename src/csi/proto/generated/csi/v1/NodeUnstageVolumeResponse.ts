// Original file: src/csi/proto/csi.proto

export interface NodeUnstageVolumeResponse {}

export interface NodeUnstageVolumeResponse__Output {}
