// Re-exports of the generated message types (Foo = what you may send, Foo__Output = what you receive).
// Regenerate with scripts/gen-proto-types.sh; this file is written by hand from that listing.
export type { CapacityRange, CapacityRange__Output } from './generated/csi/v1/CapacityRange.js';
export type { ControllerClient, ControllerDefinition, ControllerHandlers } from './generated/csi/v1/Controller.js';
export type {
  ControllerExpandVolumeRequest,
  ControllerExpandVolumeRequest__Output,
} from './generated/csi/v1/ControllerExpandVolumeRequest.js';
export type {
  ControllerExpandVolumeResponse,
  ControllerExpandVolumeResponse__Output,
} from './generated/csi/v1/ControllerExpandVolumeResponse.js';
export type {
  ControllerGetCapabilitiesRequest,
  ControllerGetCapabilitiesRequest__Output,
} from './generated/csi/v1/ControllerGetCapabilitiesRequest.js';
export type {
  ControllerGetCapabilitiesResponse,
  ControllerGetCapabilitiesResponse__Output,
} from './generated/csi/v1/ControllerGetCapabilitiesResponse.js';
export type {
  ControllerGetVolumeRequest,
  ControllerGetVolumeRequest__Output,
} from './generated/csi/v1/ControllerGetVolumeRequest.js';
export type {
  ControllerGetVolumeResponse,
  ControllerGetVolumeResponse__Output,
} from './generated/csi/v1/ControllerGetVolumeResponse.js';
export type {
  ControllerModifyVolumeRequest,
  ControllerModifyVolumeRequest__Output,
} from './generated/csi/v1/ControllerModifyVolumeRequest.js';
export type {
  ControllerModifyVolumeResponse,
  ControllerModifyVolumeResponse__Output,
} from './generated/csi/v1/ControllerModifyVolumeResponse.js';
export type {
  ControllerPublishVolumeRequest,
  ControllerPublishVolumeRequest__Output,
} from './generated/csi/v1/ControllerPublishVolumeRequest.js';
export type {
  ControllerPublishVolumeResponse,
  ControllerPublishVolumeResponse__Output,
} from './generated/csi/v1/ControllerPublishVolumeResponse.js';
export type {
  ControllerServiceCapability,
  ControllerServiceCapability__Output,
} from './generated/csi/v1/ControllerServiceCapability.js';
export type {
  ControllerUnpublishVolumeRequest,
  ControllerUnpublishVolumeRequest__Output,
} from './generated/csi/v1/ControllerUnpublishVolumeRequest.js';
export type {
  ControllerUnpublishVolumeResponse,
  ControllerUnpublishVolumeResponse__Output,
} from './generated/csi/v1/ControllerUnpublishVolumeResponse.js';
export type { CreateSnapshotRequest, CreateSnapshotRequest__Output } from './generated/csi/v1/CreateSnapshotRequest.js';
export type {
  CreateSnapshotResponse,
  CreateSnapshotResponse__Output,
} from './generated/csi/v1/CreateSnapshotResponse.js';
export type { CreateVolumeRequest, CreateVolumeRequest__Output } from './generated/csi/v1/CreateVolumeRequest.js';
export type { CreateVolumeResponse, CreateVolumeResponse__Output } from './generated/csi/v1/CreateVolumeResponse.js';
export type { DeleteSnapshotRequest, DeleteSnapshotRequest__Output } from './generated/csi/v1/DeleteSnapshotRequest.js';
export type {
  DeleteSnapshotResponse,
  DeleteSnapshotResponse__Output,
} from './generated/csi/v1/DeleteSnapshotResponse.js';
export type { DeleteVolumeRequest, DeleteVolumeRequest__Output } from './generated/csi/v1/DeleteVolumeRequest.js';
export type { DeleteVolumeResponse, DeleteVolumeResponse__Output } from './generated/csi/v1/DeleteVolumeResponse.js';
export type { GetCapacityRequest, GetCapacityRequest__Output } from './generated/csi/v1/GetCapacityRequest.js';
export type { GetCapacityResponse, GetCapacityResponse__Output } from './generated/csi/v1/GetCapacityResponse.js';
export type {
  GetPluginCapabilitiesRequest,
  GetPluginCapabilitiesRequest__Output,
} from './generated/csi/v1/GetPluginCapabilitiesRequest.js';
export type {
  GetPluginCapabilitiesResponse,
  GetPluginCapabilitiesResponse__Output,
} from './generated/csi/v1/GetPluginCapabilitiesResponse.js';
export type { GetPluginInfoRequest, GetPluginInfoRequest__Output } from './generated/csi/v1/GetPluginInfoRequest.js';
export type { GetPluginInfoResponse, GetPluginInfoResponse__Output } from './generated/csi/v1/GetPluginInfoResponse.js';
export type { IdentityClient, IdentityDefinition, IdentityHandlers } from './generated/csi/v1/Identity.js';
export type { ListSnapshotsRequest, ListSnapshotsRequest__Output } from './generated/csi/v1/ListSnapshotsRequest.js';
export type { ListSnapshotsResponse, ListSnapshotsResponse__Output } from './generated/csi/v1/ListSnapshotsResponse.js';
export type { ListVolumesRequest, ListVolumesRequest__Output } from './generated/csi/v1/ListVolumesRequest.js';
export type { ListVolumesResponse, ListVolumesResponse__Output } from './generated/csi/v1/ListVolumesResponse.js';
export type { NodeClient, NodeDefinition, NodeHandlers } from './generated/csi/v1/Node.js';
export type {
  NodeExpandVolumeRequest,
  NodeExpandVolumeRequest__Output,
} from './generated/csi/v1/NodeExpandVolumeRequest.js';
export type {
  NodeExpandVolumeResponse,
  NodeExpandVolumeResponse__Output,
} from './generated/csi/v1/NodeExpandVolumeResponse.js';
export type {
  NodeGetCapabilitiesRequest,
  NodeGetCapabilitiesRequest__Output,
} from './generated/csi/v1/NodeGetCapabilitiesRequest.js';
export type {
  NodeGetCapabilitiesResponse,
  NodeGetCapabilitiesResponse__Output,
} from './generated/csi/v1/NodeGetCapabilitiesResponse.js';
export type { NodeGetInfoRequest, NodeGetInfoRequest__Output } from './generated/csi/v1/NodeGetInfoRequest.js';
export type { NodeGetInfoResponse, NodeGetInfoResponse__Output } from './generated/csi/v1/NodeGetInfoResponse.js';
export type {
  NodeGetVolumeStatsRequest,
  NodeGetVolumeStatsRequest__Output,
} from './generated/csi/v1/NodeGetVolumeStatsRequest.js';
export type {
  NodeGetVolumeStatsResponse,
  NodeGetVolumeStatsResponse__Output,
} from './generated/csi/v1/NodeGetVolumeStatsResponse.js';
export type {
  NodePublishVolumeRequest,
  NodePublishVolumeRequest__Output,
} from './generated/csi/v1/NodePublishVolumeRequest.js';
export type {
  NodePublishVolumeResponse,
  NodePublishVolumeResponse__Output,
} from './generated/csi/v1/NodePublishVolumeResponse.js';
export type { NodeServiceCapability, NodeServiceCapability__Output } from './generated/csi/v1/NodeServiceCapability.js';
export type {
  NodeStageVolumeRequest,
  NodeStageVolumeRequest__Output,
} from './generated/csi/v1/NodeStageVolumeRequest.js';
export type {
  NodeStageVolumeResponse,
  NodeStageVolumeResponse__Output,
} from './generated/csi/v1/NodeStageVolumeResponse.js';
export type {
  NodeUnpublishVolumeRequest,
  NodeUnpublishVolumeRequest__Output,
} from './generated/csi/v1/NodeUnpublishVolumeRequest.js';
export type {
  NodeUnpublishVolumeResponse,
  NodeUnpublishVolumeResponse__Output,
} from './generated/csi/v1/NodeUnpublishVolumeResponse.js';
export type {
  NodeUnstageVolumeRequest,
  NodeUnstageVolumeRequest__Output,
} from './generated/csi/v1/NodeUnstageVolumeRequest.js';
export type {
  NodeUnstageVolumeResponse,
  NodeUnstageVolumeResponse__Output,
} from './generated/csi/v1/NodeUnstageVolumeResponse.js';
export type { PluginCapability, PluginCapability__Output } from './generated/csi/v1/PluginCapability.js';
export type { ProbeRequest, ProbeRequest__Output } from './generated/csi/v1/ProbeRequest.js';
export type { ProbeResponse, ProbeResponse__Output } from './generated/csi/v1/ProbeResponse.js';
export type { Snapshot, Snapshot__Output } from './generated/csi/v1/Snapshot.js';
export type { Topology, Topology__Output } from './generated/csi/v1/Topology.js';
export type { TopologyRequirement, TopologyRequirement__Output } from './generated/csi/v1/TopologyRequirement.js';
export type {
  ValidateVolumeCapabilitiesRequest,
  ValidateVolumeCapabilitiesRequest__Output,
} from './generated/csi/v1/ValidateVolumeCapabilitiesRequest.js';
export type {
  ValidateVolumeCapabilitiesResponse,
  ValidateVolumeCapabilitiesResponse__Output,
} from './generated/csi/v1/ValidateVolumeCapabilitiesResponse.js';
export type { Volume, Volume__Output } from './generated/csi/v1/Volume.js';
export type { VolumeCapability, VolumeCapability__Output } from './generated/csi/v1/VolumeCapability.js';
export type { VolumeCondition, VolumeCondition__Output } from './generated/csi/v1/VolumeCondition.js';
export type { VolumeContentSource, VolumeContentSource__Output } from './generated/csi/v1/VolumeContentSource.js';
export type { VolumeUsage, VolumeUsage__Output } from './generated/csi/v1/VolumeUsage.js';
export type { InfoRequest, InfoRequest__Output } from './generated/pluginregistration/InfoRequest.js';
export type { PluginInfo, PluginInfo__Output } from './generated/pluginregistration/PluginInfo.js';
export type {
  RegistrationStatus,
  RegistrationStatus__Output,
} from './generated/pluginregistration/RegistrationStatus.js';
export type {
  RegistrationStatusResponse,
  RegistrationStatusResponse__Output,
} from './generated/pluginregistration/RegistrationStatusResponse.js';
export type {
  RegistrationClient as RegistrationGrpcClient,
  RegistrationHandlers,
} from './generated/pluginregistration/Registration.js';

// Enum value names (enums load as strings; see LOADER_OPTIONS).
export type { _csi_v1_VolumeCapability_AccessMode_Mode__Output as AccessModeName } from './generated/csi/v1/VolumeCapability.js';
export type { _csi_v1_PluginCapability_Service_Type__Output as PluginServiceCapabilityName } from './generated/csi/v1/PluginCapability.js';
export type { _csi_v1_PluginCapability_VolumeExpansion_Type__Output as VolumeExpansionName } from './generated/csi/v1/PluginCapability.js';
export type { _csi_v1_ControllerServiceCapability_RPC_Type__Output as ControllerCapabilityName } from './generated/csi/v1/ControllerServiceCapability.js';
export type { _csi_v1_NodeServiceCapability_RPC_Type__Output as NodeCapabilityName } from './generated/csi/v1/NodeServiceCapability.js';
export type { _csi_v1_VolumeUsage_Unit__Output as VolumeUsageUnitName } from './generated/csi/v1/VolumeUsage.js';
