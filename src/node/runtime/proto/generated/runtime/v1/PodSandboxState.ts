// Original file: src/node/runtime/proto/cri.proto

export const PodSandboxState = {
  SANDBOX_READY: 'SANDBOX_READY',
  SANDBOX_NOTREADY: 'SANDBOX_NOTREADY',
} as const;

export type PodSandboxState = 'SANDBOX_READY' | 0 | 'SANDBOX_NOTREADY' | 1;

export type PodSandboxState__Output = (typeof PodSandboxState)[keyof typeof PodSandboxState];
