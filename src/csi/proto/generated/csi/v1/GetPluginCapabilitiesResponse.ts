// Original file: src/csi/proto/csi.proto

import type {
  PluginCapability as _csi_v1_PluginCapability,
  PluginCapability__Output as _csi_v1_PluginCapability__Output,
} from '../../csi/v1/PluginCapability.js';

export interface GetPluginCapabilitiesResponse {
  capabilities?: _csi_v1_PluginCapability[];
}

export interface GetPluginCapabilitiesResponse__Output {
  capabilities: _csi_v1_PluginCapability__Output[];
}
