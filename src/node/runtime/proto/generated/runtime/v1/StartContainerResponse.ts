// Original file: src/node/runtime/proto/cri.proto

export interface StartContainerResponse {}

export interface StartContainerResponse__Output {}
