// Original file: src/node/runtime/proto/cri.proto

import type {
  PodSandboxMetadata as _runtime_v1_PodSandboxMetadata,
  PodSandboxMetadata__Output as _runtime_v1_PodSandboxMetadata__Output,
} from '../../runtime/v1/PodSandboxMetadata.js';
import type {
  PodSandboxState as _runtime_v1_PodSandboxState,
  PodSandboxState__Output as _runtime_v1_PodSandboxState__Output,
} from '../../runtime/v1/PodSandboxState.js';
import type {
  PodSandboxNetworkStatus as _runtime_v1_PodSandboxNetworkStatus,
  PodSandboxNetworkStatus__Output as _runtime_v1_PodSandboxNetworkStatus__Output,
} from '../../runtime/v1/PodSandboxNetworkStatus.js';
import type { Long } from '@grpc/proto-loader';

export interface PodSandboxStatus {
  id?: string;
  metadata?: _runtime_v1_PodSandboxMetadata | null;
  state?: _runtime_v1_PodSandboxState;
  createdAt?: number | string | Long;
  network?: _runtime_v1_PodSandboxNetworkStatus | null;
  labels?: { [key: string]: string };
  annotations?: { [key: string]: string };
  runtimeHandler?: string;
}

export interface PodSandboxStatus__Output {
  id: string;
  metadata: _runtime_v1_PodSandboxMetadata__Output | null;
  state: _runtime_v1_PodSandboxState__Output;
  createdAt: number;
  network: _runtime_v1_PodSandboxNetworkStatus__Output | null;
  labels: { [key: string]: string };
  annotations: { [key: string]: string };
  runtimeHandler: string;
}
