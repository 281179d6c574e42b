// Original file: src/node/runtime/proto/cri.proto

import type {
  LinuxContainerResources as _runtime_v1_LinuxContainerResources,
  LinuxContainerResources__Output as _runtime_v1_LinuxContainerResources__Output,
} from '../../runtime/v1/LinuxContainerResources.js';
import type {
  LinuxContainerSecurityContext as _runtime_v1_LinuxContainerSecurityContext,
  LinuxContainerSecurityContext__Output as _runtime_v1_LinuxContainerSecurityContext__Output,
} from '../../runtime/v1/LinuxContainerSecurityContext.js';

export interface LinuxContainerConfig {
  resources?: _runtime_v1_LinuxContainerResources | null;
  securityContext?: _runtime_v1_LinuxContainerSecurityContext | null;
}

export interface LinuxContainerConfig__Output {
  resources: _runtime_v1_LinuxContainerResources__Output | null;
  securityContext: _runtime_v1_LinuxContainerSecurityContext__Output | null;
}
