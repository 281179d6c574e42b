// Original file: src/node/runtime/proto/cri.proto

import type {
  RuntimeStatus as _runtime_v1_RuntimeStatus,
  RuntimeStatus__Output as _runtime_v1_RuntimeStatus__Output,
} from '../../runtime/v1/RuntimeStatus.js';

export interface StatusResponse {
  status?: _runtime_v1_RuntimeStatus | null;
  info?: { [key: string]: string };
}

export interface StatusResponse__Output {
  status: _runtime_v1_RuntimeStatus__Output | null;
  info: { [key: string]: string };
}
