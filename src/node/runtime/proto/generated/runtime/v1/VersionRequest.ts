// Original file: src/node/runtime/proto/cri.proto

export interface VersionRequest {
  version?: string;
}

export interface VersionRequest__Output {
  version: string;
}
