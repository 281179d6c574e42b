// Original file: src/node/runtime/proto/cri.proto

export interface RemoveContainerResponse {}

export interface RemoveContainerResponse__Output {}
