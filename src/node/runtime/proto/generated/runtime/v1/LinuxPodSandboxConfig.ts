// Original file: src/node/runtime/proto/cri.proto

import type {
  LinuxSandboxSecurityContext as _runtime_v1_LinuxSandboxSecurityContext,
  LinuxSandboxSecurityContext__Output as _runtime_v1_LinuxSandboxSecurityContext__Output,
} from '../../runtime/v1/LinuxSandboxSecurityContext.js';

export interface LinuxPodSandboxConfig {
  cgroupParent?: string;
  securityContext?: _runtime_v1_LinuxSandboxSecurityContext | null;
  sysctls?: { [key: string]: string };
}

export interface LinuxPodSandboxConfig__Output {
  cgroupParent: string;
  securityContext: _runtime_v1_LinuxSandboxSecurityContext__Output | null;
  sysctls: { [key: string]: string };
}
