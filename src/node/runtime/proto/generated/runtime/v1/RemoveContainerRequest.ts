// Original file: src/node/runtime/proto/cri.proto

export interface RemoveContainerRequest {
  containerId?: string;
}

export interface RemoveContainerRequest__Output {
  containerId: string;
}
