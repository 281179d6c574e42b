// Original file: src/node/runtime/proto/cri.proto

export interface RemoveImageResponse {}

export interface RemoveImageResponse__Output {}
