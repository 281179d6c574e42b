// Original file: src/csi/proto/csi.proto

export interface ProbeRequest {}

export interface ProbeRequest__Output {}
