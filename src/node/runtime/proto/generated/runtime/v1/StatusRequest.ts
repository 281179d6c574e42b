// Original file: src/node/runtime/proto/cri.proto

export interface StatusRequest {
  verbose?: boolean;
}

export interface StatusRequest__Output {
  verbose: boolean;
}
