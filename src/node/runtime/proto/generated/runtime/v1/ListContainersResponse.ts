// Original file: src/node/runtime/proto/cri.proto

import type {
  Container as _runtime_v1_Container,
  Container__Output as _runtime_v1_Container__Output,
} from '../../runtime/v1/Container.js';

export interface ListContainersResponse {
  containers?: _runtime_v1_Container[];
}

export interface ListContainersResponse__Output {
  containers: _runtime_v1_Container__Output[];
}
