// Original file: src/node/runtime/proto/cri.proto

export interface ContainerMetadata {
  name?: string;
  attempt?: number;
}

export interface ContainerMetadata__Output {
  name: string;
  attempt: number;
}
