// Original file: src/csi/proto/csi.proto

export interface NodeStageVolumeResponse {}

export interface NodeStageVolumeResponse__Output {}
