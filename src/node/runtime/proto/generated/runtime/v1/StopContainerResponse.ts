// Original file: src/node/runtime/proto/cri.proto

export interface StopContainerResponse {}

export interface StopContainerResponse__Output {}
