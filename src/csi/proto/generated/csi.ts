import type * as grpc from '@grpc/grpc-js';
import type { MessageTypeDefinition } from '@grpc/proto-loader';

import type {
  CapacityRange as _csi_v1_CapacityRange,
  CapacityRange__Output as _csi_v1_CapacityRange__Output,
} from './csi/v1/CapacityRange.js';
import type {
  ControllerClient as _csi_v1_ControllerClient,
  ControllerDefinition as _csi_v1_ControllerDefinition,
} from './csi/v1/Controller.js';
import type {
  ControllerExpandVolumeRequest as _csi_v1_ControllerExpandVolumeRequest,
  ControllerExpandVolumeRequest__Output as _csi_v1_ControllerExpandVolumeRequest__Output,
} from './csi/v1/ControllerExpandVolumeRequest.js';
import type {
  ControllerExpandVolumeResponse as _csi_v1_ControllerExpandVolumeResponse,
  ControllerExpandVolumeResponse__Output as _csi_v1_ControllerExpandVolumeResponse__Output,
} from './csi/v1/ControllerExpandVolumeResponse.js';
import type {
  ControllerGetCapabilitiesRequest as _csi_v1_ControllerGetCapabilitiesRequest,
  ControllerGetCapabilitiesRequest__Output as _csi_v1_ControllerGetCapabilitiesRequest__Output,
} from './csi/v1/ControllerGetCapabilitiesRequest.js';
import type {
  ControllerGetCapabilitiesResponse as _csi_v1_ControllerGetCapabilitiesResponse,
  ControllerGetCapabilitiesResponse__Output as _csi_v1_ControllerGetCapabilitiesResponse__Output,
} from './csi/v1/ControllerGetCapabilitiesResponse.js';
import type {
  ControllerGetVolumeRequest as _csi_v1_ControllerGetVolumeRequest,
  ControllerGetVolumeRequest__Output as _csi_v1_ControllerGetVolumeRequest__Output,
} from './csi/v1/ControllerGetVolumeRequest.js';
import type {
  ControllerGetVolumeResponse as _csi_v1_ControllerGetVolumeResponse,
  ControllerGetVolumeResponse__Output as _csi_v1_ControllerGetVolumeResponse__Output,
} from './csi/v1/ControllerGetVolumeResponse.js';
import type {
  ControllerModifyVolumeRequest as _csi_v1_ControllerModifyVolumeRequest,
  ControllerModifyVolumeRequest__Output as _csi_v1_ControllerModifyVolumeRequest__Output,
} from './csi/v1/ControllerModifyVolumeRequest.js';
import type {
  ControllerModifyVolumeResponse as _csi_v1_ControllerModifyVolumeResponse,
  ControllerModifyVolumeResponse__Output as _csi_v1_ControllerModifyVolumeResponse__Output,
} from './csi/v1/ControllerModifyVolumeResponse.js';
import type {
  ControllerPublishVolumeRequest as _csi_v1_ControllerPublishVolumeRequest,
  ControllerPublishVolumeRequest__Output as _csi_v1_ControllerPublishVolumeRequest__Output,
} from './csi/v1/ControllerPublishVolumeRequest.js';
import type {
  ControllerPublishVolumeResponse as _csi_v1_ControllerPublishVolumeResponse,
  ControllerPublishVolumeResponse__Output as _csi_v1_ControllerPublishVolumeResponse__Output,
} from './csi/v1/ControllerPublishVolumeResponse.js';
import type {
  ControllerServiceCapability as _csi_v1_ControllerServiceCapability,
  ControllerServiceCapability__Output as _csi_v1_ControllerServiceCapability__Output,
} from './csi/v1/ControllerServiceCapability.js';
import type {
  ControllerUnpublishVolumeRequest as _csi_v1_ControllerUnpublishVolumeRequest,
  ControllerUnpublishVolumeRequest__Output as _csi_v1_ControllerUnpublishVolumeRequest__Output,
} from './csi/v1/ControllerUnpublishVolumeRequest.js';
import type {
  ControllerUnpublishVolumeResponse as _csi_v1_ControllerUnpublishVolumeResponse,
  ControllerUnpublishVolumeResponse__Output as _csi_v1_ControllerUnpublishVolumeResponse__Output,
} from './csi/v1/ControllerUnpublishVolumeResponse.js';
import type {
  CreateSnapshotRequest as _csi_v1_CreateSnapshotRequest,
  CreateSnapshotRequest__Output as _csi_v1_CreateSnapshotRequest__Output,
} from './csi/v1/CreateSnapshotRequest.js';
import type {
  CreateSnapshotResponse as _csi_v1_CreateSnapshotResponse,
  CreateSnapshotResponse__Output as _csi_v1_CreateSnapshotResponse__Output,
} from './csi/v1/CreateSnapshotResponse.js';
import type {
  CreateVolumeRequest as _csi_v1_CreateVolumeRequest,
  CreateVolumeRequest__Output as _csi_v1_CreateVolumeRequest__Output,
} from './csi/v1/CreateVolumeRequest.js';
import type {
  CreateVolumeResponse as _csi_v1_CreateVolumeResponse,
  CreateVolumeResponse__Output as _csi_v1_CreateVolumeResponse__Output,
} from './csi/v1/CreateVolumeResponse.js';
import type {
  DeleteSnapshotRequest as _csi_v1_DeleteSnapshotRequest,
  DeleteSnapshotRequest__Output as _csi_v1_DeleteSnapshotRequest__Output,
} from './csi/v1/DeleteSnapshotRequest.js';
import type {
  DeleteSnapshotResponse as _csi_v1_DeleteSnapshotResponse,
  DeleteSnapshotResponse__Output as _csi_v1_DeleteSnapshotResponse__Output,
} from './csi/v1/DeleteSnapshotResponse.js';
import type {
  DeleteVolumeRequest as _csi_v1_DeleteVolumeRequest,
  DeleteVolumeRequest__Output as _csi_v1_DeleteVolumeRequest__Output,
} from './csi/v1/DeleteVolumeRequest.js';
import type {
  DeleteVolumeResponse as _csi_v1_DeleteVolumeResponse,
  DeleteVolumeResponse__Output as _csi_v1_DeleteVolumeResponse__Output,
} from './csi/v1/DeleteVolumeResponse.js';
import type {
  GetCapacityRequest as _csi_v1_GetCapacityRequest,
  GetCapacityRequest__Output as _csi_v1_GetCapacityRequest__Output,
} from './csi/v1/GetCapacityRequest.js';
import type {
  GetCapacityResponse as _csi_v1_GetCapacityResponse,
  GetCapacityResponse__Output as _csi_v1_GetCapacityResponse__Output,
} from './csi/v1/GetCapacityResponse.js';
import type {
  GetPluginCapabilitiesRequest as _csi_v1_GetPluginCapabilitiesRequest,
  GetPluginCapabilitiesRequest__Output as _csi_v1_GetPluginCapabilitiesRequest__Output,
} from './csi/v1/GetPluginCapabilitiesRequest.js';
import type {
  GetPluginCapabilitiesResponse as _csi_v1_GetPluginCapabilitiesResponse,
  GetPluginCapabilitiesResponse__Output as _csi_v1_GetPluginCapabilitiesResponse__Output,
} from './csi/v1/GetPluginCapabilitiesResponse.js';
import type {
  GetPluginInfoRequest as _csi_v1_GetPluginInfoRequest,
  GetPluginInfoRequest__Output as _csi_v1_GetPluginInfoRequest__Output,
} from './csi/v1/GetPluginInfoRequest.js';
import type {
  GetPluginInfoResponse as _csi_v1_GetPluginInfoResponse,
  GetPluginInfoResponse__Output as _csi_v1_GetPluginInfoResponse__Output,
} from './csi/v1/GetPluginInfoResponse.js';
import type {
  IdentityClient as _csi_v1_IdentityClient,
  IdentityDefinition as _csi_v1_IdentityDefinition,
} from './csi/v1/Identity.js';
import type {
  ListSnapshotsRequest as _csi_v1_ListSnapshotsRequest,
  ListSnapshotsRequest__Output as _csi_v1_ListSnapshotsRequest__Output,
} from './csi/v1/ListSnapshotsRequest.js';
import type {
  ListSnapshotsResponse as _csi_v1_ListSnapshotsResponse,
  ListSnapshotsResponse__Output as _csi_v1_ListSnapshotsResponse__Output,
} from './csi/v1/ListSnapshotsResponse.js';
import type {
  ListVolumesRequest as _csi_v1_ListVolumesRequest,
  ListVolumesRequest__Output as _csi_v1_ListVolumesRequest__Output,
} from './csi/v1/ListVolumesRequest.js';
import type {
  ListVolumesResponse as _csi_v1_ListVolumesResponse,
  ListVolumesResponse__Output as _csi_v1_ListVolumesResponse__Output,
} from './csi/v1/ListVolumesResponse.js';
import type { NodeClient as _csi_v1_NodeClient, NodeDefinition as _csi_v1_NodeDefinition } from './csi/v1/Node.js';
import type {
  NodeExpandVolumeRequest as _csi_v1_NodeExpandVolumeRequest,
  NodeExpandVolumeRequest__Output as _csi_v1_NodeExpandVolumeRequest__Output,
} from './csi/v1/NodeExpandVolumeRequest.js';
import type {
  NodeExpandVolumeResponse as _csi_v1_NodeExpandVolumeResponse,
  NodeExpandVolumeResponse__Output as _csi_v1_NodeExpandVolumeResponse__Output,
} from './csi/v1/NodeExpandVolumeResponse.js';
import type {
  NodeGetCapabilitiesRequest as _csi_v1_NodeGetCapabilitiesRequest,
  NodeGetCapabilitiesRequest__Output as _csi_v1_NodeGetCapabilitiesRequest__Output,
} from './csi/v1/NodeGetCapabilitiesRequest.js';
import type {
  NodeGetCapabilitiesResponse as _csi_v1_NodeGetCapabilitiesResponse,
  NodeGetCapabilitiesResponse__Output as _csi_v1_NodeGetCapabilitiesResponse__Output,
} from './csi/v1/NodeGetCapabilitiesResponse.js';
import type {
  NodeGetInfoRequest as _csi_v1_NodeGetInfoRequest,
  NodeGetInfoRequest__Output as _csi_v1_NodeGetInfoRequest__Output,
} from './csi/v1/NodeGetInfoRequest.js';
import type {
  NodeGetInfoResponse as _csi_v1_NodeGetInfoResponse,
  NodeGetInfoResponse__Output as _csi_v1_NodeGetInfoResponse__Output,
} from './csi/v1/NodeGetInfoResponse.js';
import type {
  NodeGetVolumeStatsRequest as _csi_v1_NodeGetVolumeStatsRequest,
  NodeGetVolumeStatsRequest__Output as _csi_v1_NodeGetVolumeStatsRequest__Output,
} from './csi/v1/NodeGetVolumeStatsRequest.js';
import type {
  NodeGetVolumeStatsResponse as _csi_v1_NodeGetVolumeStatsResponse,
  NodeGetVolumeStatsResponse__Output as _csi_v1_NodeGetVolumeStatsResponse__Output,
} from './csi/v1/NodeGetVolumeStatsResponse.js';
import type {
  NodePublishVolumeRequest as _csi_v1_NodePublishVolumeRequest,
  NodePublishVolumeRequest__Output as _csi_v1_NodePublishVolumeRequest__Output,
} from './csi/v1/NodePublishVolumeRequest.js';
import type {
  NodePublishVolumeResponse as _csi_v1_NodePublishVolumeResponse,
  NodePublishVolumeResponse__Output as _csi_v1_NodePublishVolumeResponse__Output,
} from './csi/v1/NodePublishVolumeResponse.js';
import type {
  NodeServiceCapability as _csi_v1_NodeServiceCapability,
  NodeServiceCapability__Output as _csi_v1_NodeServiceCapability__Output,
} from './csi/v1/NodeServiceCapability.js';
import type {
  NodeStageVolumeRequest as _csi_v1_NodeStageVolumeRequest,
  NodeStageVolumeRequest__Output as _csi_v1_NodeStageVolumeRequest__Output,
} from './csi/v1/NodeStageVolumeRequest.js';
import type {
  NodeStageVolumeResponse as _csi_v1_NodeStageVolumeResponse,
  NodeStageVolumeResponse__Output as _csi_v1_NodeStageVolumeResponse__Output,
} from './csi/v1/NodeStageVolumeResponse.js';
import type {
  NodeUnpublishVolumeRequest as _csi_v1_NodeUnpublishVolumeRequest,
  NodeUnpublishVolumeRequest__Output as _csi_v1_NodeUnpublishVolumeRequest__Output,
} from './csi/v1/NodeUnpublishVolumeRequest.js';
import type {
  NodeUnpublishVolumeResponse as _csi_v1_NodeUnpublishVolumeResponse,
  NodeUnpublishVolumeResponse__Output as _csi_v1_NodeUnpublishVolumeResponse__Output,
} from './csi/v1/NodeUnpublishVolumeResponse.js';
import type {
  NodeUnstageVolumeRequest as _csi_v1_NodeUnstageVolumeRequest,
  NodeUnstageVolumeRequest__Output as _csi_v1_NodeUnstageVolumeRequest__Output,
} from './csi/v1/NodeUnstageVolumeRequest.js';
import type {
  NodeUnstageVolumeResponse as _csi_v1_NodeUnstageVolumeResponse,
  NodeUnstageVolumeResponse__Output as _csi_v1_NodeUnstageVolumeResponse__Output,
} from './csi/v1/NodeUnstageVolumeResponse.js';
import type {
  PluginCapability as _csi_v1_PluginCapability,
  PluginCapability__Output as _csi_v1_PluginCapability__Output,
} from './csi/v1/PluginCapability.js';
import type {
  ProbeRequest as _csi_v1_ProbeRequest,
  ProbeRequest__Output as _csi_v1_ProbeRequest__Output,
} from './csi/v1/ProbeRequest.js';
import type {
  ProbeResponse as _csi_v1_ProbeResponse,
  ProbeResponse__Output as _csi_v1_ProbeResponse__Output,
} from './csi/v1/ProbeResponse.js';
import type { Snapshot as _csi_v1_Snapshot, Snapshot__Output as _csi_v1_Snapshot__Output } from './csi/v1/Snapshot.js';
import type { Topology as _csi_v1_Topology, Topology__Output as _csi_v1_Topology__Output } from './csi/v1/Topology.js';
import type {
  TopologyRequirement as _csi_v1_TopologyRequirement,
  TopologyRequirement__Output as _csi_v1_TopologyRequirement__Output,
} from './csi/v1/TopologyRequirement.js';
import type {
  ValidateVolumeCapabilitiesRequest as _csi_v1_ValidateVolumeCapabilitiesRequest,
  ValidateVolumeCapabilitiesRequest__Output as _csi_v1_ValidateVolumeCapabilitiesRequest__Output,
} from './csi/v1/ValidateVolumeCapabilitiesRequest.js';
import type {
  ValidateVolumeCapabilitiesResponse as _csi_v1_ValidateVolumeCapabilitiesResponse,
  ValidateVolumeCapabilitiesResponse__Output as _csi_v1_ValidateVolumeCapabilitiesResponse__Output,
} from './csi/v1/ValidateVolumeCapabilitiesResponse.js';
import type { Volume as _csi_v1_Volume, Volume__Output as _csi_v1_Volume__Output } from './csi/v1/Volume.js';
import type {
  VolumeCapability as _csi_v1_VolumeCapability,
  VolumeCapability__Output as _csi_v1_VolumeCapability__Output,
} from './csi/v1/VolumeCapability.js';
import type {
  VolumeCondition as _csi_v1_VolumeCondition,
  VolumeCondition__Output as _csi_v1_VolumeCondition__Output,
} from './csi/v1/VolumeCondition.js';
import type {
  VolumeContentSource as _csi_v1_VolumeContentSource,
  VolumeContentSource__Output as _csi_v1_VolumeContentSource__Output,
} from './csi/v1/VolumeContentSource.js';
import type {
  VolumeUsage as _csi_v1_VolumeUsage,
  VolumeUsage__Output as _csi_v1_VolumeUsage__Output,
} from './csi/v1/VolumeUsage.js';
import type {
  BoolValue as _google_protobuf_BoolValue,
  BoolValue__Output as _google_protobuf_BoolValue__Output,
} from './google/protobuf/BoolValue.js';
import type {
  BytesValue as _google_protobuf_BytesValue,
  BytesValue__Output as _google_protobuf_BytesValue__Output,
} from './google/protobuf/BytesValue.js';
import type {
  DoubleValue as _google_protobuf_DoubleValue,
  DoubleValue__Output as _google_protobuf_DoubleValue__Output,
} from './google/protobuf/DoubleValue.js';
import type {
  FloatValue as _google_protobuf_FloatValue,
  FloatValue__Output as _google_protobuf_FloatValue__Output,
} from './google/protobuf/FloatValue.js';
import type {
  Int32Value as _google_protobuf_Int32Value,
  Int32Value__Output as _google_protobuf_Int32Value__Output,
} from './google/protobuf/Int32Value.js';
import type {
  Int64Value as _google_protobuf_Int64Value,
  Int64Value__Output as _google_protobuf_Int64Value__Output,
} from './google/protobuf/Int64Value.js';
import type {
  StringValue as _google_protobuf_StringValue,
  StringValue__Output as _google_protobuf_StringValue__Output,
} from './google/protobuf/StringValue.js';
import type {
  Timestamp as _google_protobuf_Timestamp,
  Timestamp__Output as _google_protobuf_Timestamp__Output,
} from './google/protobuf/Timestamp.js';
import type {
  UInt32Value as _google_protobuf_UInt32Value,
  UInt32Value__Output as _google_protobuf_UInt32Value__Output,
} from './google/protobuf/UInt32Value.js';
import type {
  UInt64Value as _google_protobuf_UInt64Value,
  UInt64Value__Output as _google_protobuf_UInt64Value__Output,
} from './google/protobuf/UInt64Value.js';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new (...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  csi: {
    v1: {
      CapacityRange: MessageTypeDefinition<_csi_v1_CapacityRange, _csi_v1_CapacityRange__Output>;
      Controller: SubtypeConstructor<typeof grpc.Client, _csi_v1_ControllerClient> & {
        service: _csi_v1_ControllerDefinition;
      };
      ControllerExpandVolumeRequest: MessageTypeDefinition<
        _csi_v1_ControllerExpandVolumeRequest,
        _csi_v1_ControllerExpandVolumeRequest__Output
      >;
      ControllerExpandVolumeResponse: MessageTypeDefinition<
        _csi_v1_ControllerExpandVolumeResponse,
        _csi_v1_ControllerExpandVolumeResponse__Output
      >;
      ControllerGetCapabilitiesRequest: MessageTypeDefinition<
        _csi_v1_ControllerGetCapabilitiesRequest,
        _csi_v1_ControllerGetCapabilitiesRequest__Output
      >;
      ControllerGetCapabilitiesResponse: MessageTypeDefinition<
        _csi_v1_ControllerGetCapabilitiesResponse,
        _csi_v1_ControllerGetCapabilitiesResponse__Output
      >;
      ControllerGetVolumeRequest: MessageTypeDefinition<
        _csi_v1_ControllerGetVolumeRequest,
        _csi_v1_ControllerGetVolumeRequest__Output
      >;
      ControllerGetVolumeResponse: MessageTypeDefinition<
        _csi_v1_ControllerGetVolumeResponse,
        _csi_v1_ControllerGetVolumeResponse__Output
      >;
      ControllerModifyVolumeRequest: MessageTypeDefinition<
        _csi_v1_ControllerModifyVolumeRequest,
        _csi_v1_ControllerModifyVolumeRequest__Output
      >;
      ControllerModifyVolumeResponse: MessageTypeDefinition<
        _csi_v1_ControllerModifyVolumeResponse,
        _csi_v1_ControllerModifyVolumeResponse__Output
      >;
      ControllerPublishVolumeRequest: MessageTypeDefinition<
        _csi_v1_ControllerPublishVolumeRequest,
        _csi_v1_ControllerPublishVolumeRequest__Output
      >;
      ControllerPublishVolumeResponse: MessageTypeDefinition<
        _csi_v1_ControllerPublishVolumeResponse,
        _csi_v1_ControllerPublishVolumeResponse__Output
      >;
      ControllerServiceCapability: MessageTypeDefinition<
        _csi_v1_ControllerServiceCapability,
        _csi_v1_ControllerServiceCapability__Output
      >;
      ControllerUnpublishVolumeRequest: MessageTypeDefinition<
        _csi_v1_ControllerUnpublishVolumeRequest,
        _csi_v1_ControllerUnpublishVolumeRequest__Output
      >;
      ControllerUnpublishVolumeResponse: MessageTypeDefinition<
        _csi_v1_ControllerUnpublishVolumeResponse,
        _csi_v1_ControllerUnpublishVolumeResponse__Output
      >;
      CreateSnapshotRequest: MessageTypeDefinition<
        _csi_v1_CreateSnapshotRequest,
        _csi_v1_CreateSnapshotRequest__Output
      >;
      CreateSnapshotResponse: MessageTypeDefinition<
        _csi_v1_CreateSnapshotResponse,
        _csi_v1_CreateSnapshotResponse__Output
      >;
      CreateVolumeRequest: MessageTypeDefinition<_csi_v1_CreateVolumeRequest, _csi_v1_CreateVolumeRequest__Output>;
      CreateVolumeResponse: MessageTypeDefinition<_csi_v1_CreateVolumeResponse, _csi_v1_CreateVolumeResponse__Output>;
      DeleteSnapshotRequest: MessageTypeDefinition<
        _csi_v1_DeleteSnapshotRequest,
        _csi_v1_DeleteSnapshotRequest__Output
      >;
      DeleteSnapshotResponse: MessageTypeDefinition<
        _csi_v1_DeleteSnapshotResponse,
        _csi_v1_DeleteSnapshotResponse__Output
      >;
      DeleteVolumeRequest: MessageTypeDefinition<_csi_v1_DeleteVolumeRequest, _csi_v1_DeleteVolumeRequest__Output>;
      DeleteVolumeResponse: MessageTypeDefinition<_csi_v1_DeleteVolumeResponse, _csi_v1_DeleteVolumeResponse__Output>;
      GetCapacityRequest: MessageTypeDefinition<_csi_v1_GetCapacityRequest, _csi_v1_GetCapacityRequest__Output>;
      GetCapacityResponse: MessageTypeDefinition<_csi_v1_GetCapacityResponse, _csi_v1_GetCapacityResponse__Output>;
      GetPluginCapabilitiesRequest: MessageTypeDefinition<
        _csi_v1_GetPluginCapabilitiesRequest,
        _csi_v1_GetPluginCapabilitiesRequest__Output
      >;
      GetPluginCapabilitiesResponse: MessageTypeDefinition<
        _csi_v1_GetPluginCapabilitiesResponse,
        _csi_v1_GetPluginCapabilitiesResponse__Output
      >;
      GetPluginInfoRequest: MessageTypeDefinition<_csi_v1_GetPluginInfoRequest, _csi_v1_GetPluginInfoRequest__Output>;
      GetPluginInfoResponse: MessageTypeDefinition<
        _csi_v1_GetPluginInfoResponse,
        _csi_v1_GetPluginInfoResponse__Output
      >;
      Identity: SubtypeConstructor<typeof grpc.Client, _csi_v1_IdentityClient> & {
        service: _csi_v1_IdentityDefinition;
      };
      ListSnapshotsRequest: MessageTypeDefinition<_csi_v1_ListSnapshotsRequest, _csi_v1_ListSnapshotsRequest__Output>;
      ListSnapshotsResponse: MessageTypeDefinition<
        _csi_v1_ListSnapshotsResponse,
        _csi_v1_ListSnapshotsResponse__Output
      >;
      ListVolumesRequest: MessageTypeDefinition<_csi_v1_ListVolumesRequest, _csi_v1_ListVolumesRequest__Output>;
      ListVolumesResponse: MessageTypeDefinition<_csi_v1_ListVolumesResponse, _csi_v1_ListVolumesResponse__Output>;
      Node: SubtypeConstructor<typeof grpc.Client, _csi_v1_NodeClient> & { service: _csi_v1_NodeDefinition };
      NodeExpandVolumeRequest: MessageTypeDefinition<
        _csi_v1_NodeExpandVolumeRequest,
        _csi_v1_NodeExpandVolumeRequest__Output
      >;
      NodeExpandVolumeResponse: MessageTypeDefinition<
        _csi_v1_NodeExpandVolumeResponse,
        _csi_v1_NodeExpandVolumeResponse__Output
      >;
      NodeGetCapabilitiesRequest: MessageTypeDefinition<
        _csi_v1_NodeGetCapabilitiesRequest,
        _csi_v1_NodeGetCapabilitiesRequest__Output
      >;
      NodeGetCapabilitiesResponse: MessageTypeDefinition<
        _csi_v1_NodeGetCapabilitiesResponse,
        _csi_v1_NodeGetCapabilitiesResponse__Output
      >;
      NodeGetInfoRequest: MessageTypeDefinition<_csi_v1_NodeGetInfoRequest, _csi_v1_NodeGetInfoRequest__Output>;
      NodeGetInfoResponse: MessageTypeDefinition<_csi_v1_NodeGetInfoResponse, _csi_v1_NodeGetInfoResponse__Output>;
      NodeGetVolumeStatsRequest: MessageTypeDefinition<
        _csi_v1_NodeGetVolumeStatsRequest,
        _csi_v1_NodeGetVolumeStatsRequest__Output
      >;
      NodeGetVolumeStatsResponse: MessageTypeDefinition<
        _csi_v1_NodeGetVolumeStatsResponse,
        _csi_v1_NodeGetVolumeStatsResponse__Output
      >;
      NodePublishVolumeRequest: MessageTypeDefinition<
        _csi_v1_NodePublishVolumeRequest,
        _csi_v1_NodePublishVolumeRequest__Output
      >;
      NodePublishVolumeResponse: MessageTypeDefinition<
        _csi_v1_NodePublishVolumeResponse,
        _csi_v1_NodePublishVolumeResponse__Output
      >;
      NodeServiceCapability: MessageTypeDefinition<
        _csi_v1_NodeServiceCapability,
        _csi_v1_NodeServiceCapability__Output
      >;
      NodeStageVolumeRequest: MessageTypeDefinition<
        _csi_v1_NodeStageVolumeRequest,
        _csi_v1_NodeStageVolumeRequest__Output
      >;
      NodeStageVolumeResponse: MessageTypeDefinition<
        _csi_v1_NodeStageVolumeResponse,
        _csi_v1_NodeStageVolumeResponse__Output
      >;
      NodeUnpublishVolumeRequest: MessageTypeDefinition<
        _csi_v1_NodeUnpublishVolumeRequest,
        _csi_v1_NodeUnpublishVolumeRequest__Output
      >;
      NodeUnpublishVolumeResponse: MessageTypeDefinition<
        _csi_v1_NodeUnpublishVolumeResponse,
        _csi_v1_NodeUnpublishVolumeResponse__Output
      >;
      NodeUnstageVolumeRequest: MessageTypeDefinition<
        _csi_v1_NodeUnstageVolumeRequest,
        _csi_v1_NodeUnstageVolumeRequest__Output
      >;
      NodeUnstageVolumeResponse: MessageTypeDefinition<
        _csi_v1_NodeUnstageVolumeResponse,
        _csi_v1_NodeUnstageVolumeResponse__Output
      >;
      PluginCapability: MessageTypeDefinition<_csi_v1_PluginCapability, _csi_v1_PluginCapability__Output>;
      ProbeRequest: MessageTypeDefinition<_csi_v1_ProbeRequest, _csi_v1_ProbeRequest__Output>;
      ProbeResponse: MessageTypeDefinition<_csi_v1_ProbeResponse, _csi_v1_ProbeResponse__Output>;
      Snapshot: MessageTypeDefinition<_csi_v1_Snapshot, _csi_v1_Snapshot__Output>;
      Topology: MessageTypeDefinition<_csi_v1_Topology, _csi_v1_Topology__Output>;
      TopologyRequirement: MessageTypeDefinition<_csi_v1_TopologyRequirement, _csi_v1_TopologyRequirement__Output>;
      ValidateVolumeCapabilitiesRequest: MessageTypeDefinition<
        _csi_v1_ValidateVolumeCapabilitiesRequest,
        _csi_v1_ValidateVolumeCapabilitiesRequest__Output
      >;
      ValidateVolumeCapabilitiesResponse: MessageTypeDefinition<
        _csi_v1_ValidateVolumeCapabilitiesResponse,
        _csi_v1_ValidateVolumeCapabilitiesResponse__Output
      >;
      Volume: MessageTypeDefinition<_csi_v1_Volume, _csi_v1_Volume__Output>;
      VolumeCapability: MessageTypeDefinition<_csi_v1_VolumeCapability, _csi_v1_VolumeCapability__Output>;
      VolumeCondition: MessageTypeDefinition<_csi_v1_VolumeCondition, _csi_v1_VolumeCondition__Output>;
      VolumeContentSource: MessageTypeDefinition<_csi_v1_VolumeContentSource, _csi_v1_VolumeContentSource__Output>;
      VolumeUsage: MessageTypeDefinition<_csi_v1_VolumeUsage, _csi_v1_VolumeUsage__Output>;
    };
  };
  google: {
    protobuf: {
      BoolValue: MessageTypeDefinition<_google_protobuf_BoolValue, _google_protobuf_BoolValue__Output>;
      BytesValue: MessageTypeDefinition<_google_protobuf_BytesValue, _google_protobuf_BytesValue__Output>;
      DoubleValue: MessageTypeDefinition<_google_protobuf_DoubleValue, _google_protobuf_DoubleValue__Output>;
      FloatValue: MessageTypeDefinition<_google_protobuf_FloatValue, _google_protobuf_FloatValue__Output>;
      Int32Value: MessageTypeDefinition<_google_protobuf_Int32Value, _google_protobuf_Int32Value__Output>;
      Int64Value: MessageTypeDefinition<_google_protobuf_Int64Value, _google_protobuf_Int64Value__Output>;
      StringValue: MessageTypeDefinition<_google_protobuf_StringValue, _google_protobuf_StringValue__Output>;
      Timestamp: MessageTypeDefinition<_google_protobuf_Timestamp, _google_protobuf_Timestamp__Output>;
      UInt32Value: MessageTypeDefinition<_google_protobuf_UInt32Value, _google_protobuf_UInt32Value__Output>;
      UInt64Value: MessageTypeDefinition<_google_protobuf_UInt64Value, _google_protobuf_UInt64Value__Output>;
    };
  };
}
