// Original file: src/node/runtime/proto/cri.proto

import type {
  Capability as _runtime_v1_Capability,
  Capability__Output as _runtime_v1_Capability__Output,
} from '../../runtime/v1/Capability.js';
import type {
  NamespaceOption as _runtime_v1_NamespaceOption,
  NamespaceOption__Output as _runtime_v1_NamespaceOption__Output,
} from '../../runtime/v1/NamespaceOption.js';
import type {
  Int64Value as _runtime_v1_Int64Value,
  Int64Value__Output as _runtime_v1_Int64Value__Output,
} from '../../runtime/v1/Int64Value.js';
import type { Long } from '@grpc/proto-loader';

export interface LinuxContainerSecurityContext {
  capabilities?: _runtime_v1_Capability | null;
  privileged?: boolean;
  namespaceOptions?: _runtime_v1_NamespaceOption | null;
  runAsUser?: _runtime_v1_Int64Value | null;
  runAsUsername?: string;
  readonlyRootfs?: boolean;
  supplementalGroups?: (number | string | Long)[];
  noNewPrivs?: boolean;
  runAsGroup?: _runtime_v1_Int64Value | null;
}

export interface LinuxContainerSecurityContext__Output {
  capabilities: _runtime_v1_Capability__Output | null;
  privileged: boolean;
  namespaceOptions: _runtime_v1_NamespaceOption__Output | null;
  runAsUser: _runtime_v1_Int64Value__Output | null;
  runAsUsername: string;
  readonlyRootfs: boolean;
  supplementalGroups: number[];
  noNewPrivs: boolean;
  runAsGroup: _runtime_v1_Int64Value__Output | null;
}
