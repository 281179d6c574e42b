// Original file: src/csi/proto/csi.proto

export interface GetPluginCapabilitiesRequest {}

export interface GetPluginCapabilitiesRequest__Output {}
