// Original file: src/node/runtime/proto/cri.proto

export interface RemovePodSandboxResponse {}

export interface RemovePodSandboxResponse__Output {}
