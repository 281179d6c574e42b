// Original file: src/node/runtime/proto/cri.proto

export interface AttachResponse {
  url?: string;
}

export interface AttachResponse__Output {
  url: string;
}
