// Original file: src/csi/proto/csi.proto

export interface NodeGetCapabilitiesRequest {}

export interface NodeGetCapabilitiesRequest__Output {}
