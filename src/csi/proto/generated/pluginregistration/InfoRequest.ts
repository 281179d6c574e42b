// Original file: src/csi/proto/pluginregistration.proto

export interface InfoRequest {}

export interface InfoRequest__Output {}
