// Original file: src/node/runtime/proto/cri.proto

export interface ExecResponse {
  url?: string;
}

export interface ExecResponse__Output {
  url: string;
}
