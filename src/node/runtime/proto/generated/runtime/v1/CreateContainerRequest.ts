// Original file: src/node/runtime/proto/cri.proto

import type {
  ContainerConfig as _runtime_v1_ContainerConfig,
  ContainerConfig__Output as _runtime_v1_ContainerConfig__Output,
} from '../../runtime/v1/ContainerConfig.js';
import type {
  PodSandboxConfig as _runtime_v1_PodSandboxConfig,
  PodSandboxConfig__Output as _runtime_v1_PodSandboxConfig__Output,
} from '../../runtime/v1/PodSandboxConfig.js';

export interface CreateContainerRequest {
  podSandboxId?: string;
  config?: _runtime_v1_ContainerConfig | null;
  sandboxConfig?: _runtime_v1_PodSandboxConfig | null;
}

export interface CreateContainerRequest__Output {
  podSandboxId: string;
  config: _runtime_v1_ContainerConfig__Output | null;
  sandboxConfig: _runtime_v1_PodSandboxConfig__Output | null;
}
