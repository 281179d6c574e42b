// Original file: src/node/runtime/proto/cri.proto

export interface PullImageResponse {
  imageRef?: string;
}

export interface PullImageResponse__Output {
  imageRef: string;
}
