// Original file: src/node/runtime/proto/cri.proto

export interface PodSandboxStatusRequest {
  podSandboxId?: string;
  verbose?: boolean;
}

export interface PodSandboxStatusRequest__Output {
  podSandboxId: string;
  verbose: boolean;
}
