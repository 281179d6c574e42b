// Original file: src/node/runtime/proto/cri.proto

import type {
  PodSandboxStatus as _runtime_v1_PodSandboxStatus,
  PodSandboxStatus__Output as _runtime_v1_PodSandboxStatus__Output,
} from '../../runtime/v1/PodSandboxStatus.js';

export interface PodSandboxStatusResponse {
  status?: _runtime_v1_PodSandboxStatus | null;
  info?: { [key: string]: string };
}

export interface PodSandboxStatusResponse__Output {
  status: _runtime_v1_PodSandboxStatus__Output | null;
  info: { [key: string]: string };
}
