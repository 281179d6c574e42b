// Original file: src/csi/proto/csi.proto

export interface ControllerModifyVolumeResponse {}

export interface ControllerModifyVolumeResponse__Output {}
