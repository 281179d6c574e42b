// Original file: src/node/runtime/proto/cri.proto

import type {
  MountPropagation as _runtime_v1_MountPropagation,
  MountPropagation__Output as _runtime_v1_MountPropagation__Output,
} from '../../runtime/v1/MountPropagation.js';

export interface Mount {
  containerPath?: string;
  hostPath?: string;
  readonly?: boolean;
  selinuxRelabel?: boolean;
  propagation?: _runtime_v1_MountPropagation;
}

export interface Mount__Output {
  containerPath: string;
  hostPath: string;
  readonly: boolean;
  selinuxRelabel: boolean;
  propagation: _runtime_v1_MountPropagation__Output;
}
