// Original file: src/node/runtime/proto/cri.proto

export interface CreateContainerResponse {
  containerId?: string;
}

export interface CreateContainerResponse__Output {
  containerId: string;
}
