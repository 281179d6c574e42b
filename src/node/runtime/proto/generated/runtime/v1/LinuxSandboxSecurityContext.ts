// Original file: src/node/runtime/proto/cri.proto

import type {
  NamespaceOption as _runtime_v1_NamespaceOption,
  NamespaceOption__Output as _runtime_v1_NamespaceOption__Output,
} from '../../runtime/v1/NamespaceOption.js';
import type {
  Int64Value as _runtime_v1_Int64Value,
  Int64Value__Output as _runtime_v1_Int64Value__Output,
} from '../../runtime/v1/Int64Value.js';
import type { Long } from '@grpc/proto-loader';

export interface LinuxSandboxSecurityContext {
  namespaceOptions?: _runtime_v1_NamespaceOption | null;
  runAsUser?: _runtime_v1_Int64Value | null;
  readonlyRootfs?: boolean;
  supplementalGroups?: (number | string | Long)[];
  privileged?: boolean;
  runAsGroup?: _runtime_v1_Int64Value | null;
}

export interface LinuxSandboxSecurityContext__Output {
  namespaceOptions: _runtime_v1_NamespaceOption__Output | null;
  runAsUser: _runtime_v1_Int64Value__Output | null;
  readonlyRootfs: boolean;
  supplementalGroups: number[];
  privileged: boolean;
  runAsGroup: _runtime_v1_Int64Value__Output | null;
}
