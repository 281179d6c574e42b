// Original file: src/csi/proto/csi.proto

export interface ControllerGetCapabilitiesRequest {}

export interface ControllerGetCapabilitiesRequest__Output {}
