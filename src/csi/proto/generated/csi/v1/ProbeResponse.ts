// Original file: src/csi/proto/csi.proto

import type {
  BoolValue as _google_protobuf_BoolValue,
  BoolValue__Output as _google_protobuf_BoolValue__Output,
} from '../../google/protobuf/BoolValue.js';

export interface ProbeResponse {
  ready?: _google_protobuf_BoolValue | null;
}

export interface ProbeResponse__Output {
  ready: _google_protobuf_BoolValue__Output | null;
}
