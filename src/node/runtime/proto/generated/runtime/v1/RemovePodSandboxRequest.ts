// Original file: src/node/runtime/proto/cri.proto

export interface RemovePodSandboxRequest {
  podSandboxId?: string;
}

export interface RemovePodSandboxRequest__Output {
  podSandboxId: string;
}
