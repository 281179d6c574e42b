// Original file: src/node/runtime/proto/cri.proto

export interface RunPodSandboxResponse {
  podSandboxId?: string;
}

export interface RunPodSandboxResponse__Output {
  podSandboxId: string;
}
