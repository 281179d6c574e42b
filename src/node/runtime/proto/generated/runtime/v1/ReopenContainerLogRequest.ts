// Original file: src/node/runtime/proto/cri.proto

export interface ReopenContainerLogRequest {
  containerId?: string;
}

export interface ReopenContainerLogRequest__Output {
  containerId: string;
}
