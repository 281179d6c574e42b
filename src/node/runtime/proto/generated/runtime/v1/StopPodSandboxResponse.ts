// Original file: src/node/runtime/proto/cri.proto

export interface StopPodSandboxResponse {}

export interface StopPodSandboxResponse__Output {}
