// Original file: src/node/runtime/proto/cri.proto

export interface StopPodSandboxRequest {
  podSandboxId?: string;
}

export interface StopPodSandboxRequest__Output {
  podSandboxId: string;
}
