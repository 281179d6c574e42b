// Original file: src/node/runtime/proto/cri.proto

export interface KeyValue {
  key?: string;
  value?: string;
}

export interface KeyValue__Output {
  key: string;
  value: string;
}
