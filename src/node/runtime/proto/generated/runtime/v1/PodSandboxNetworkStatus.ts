// Original file: src/node/runtime/proto/cri.proto

export interface PodSandboxNetworkStatus {
  ip?: string;
}

export interface PodSandboxNetworkStatus__Output {
  ip: string;
}
