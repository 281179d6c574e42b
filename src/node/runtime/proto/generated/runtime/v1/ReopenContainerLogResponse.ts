// Original file: src/node/runtime/proto/cri.proto

export interface ReopenContainerLogResponse {}

export interface ReopenContainerLogResponse__Output {}
