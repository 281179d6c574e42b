// Original file: src/csi/proto/csi.proto

export interface NodeGetInfoRequest {}

export interface NodeGetInfoRequest__Output {}
