// Original file: src/node/runtime/proto/cri.proto

export interface StartContainerRequest {
  containerId?: string;
}

export interface StartContainerRequest__Output {
  containerId: string;
}
