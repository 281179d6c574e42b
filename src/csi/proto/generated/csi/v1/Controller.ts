// Original file: src/csi/proto/csi.proto

import type * as grpc from '@grpc/grpc-js';
import type { MethodDefinition } from '@grpc/proto-loader';
import type {
  ControllerExpandVolumeRequest as _csi_v1_ControllerExpandVolumeRequest,
  ControllerExpandVolumeRequest__Output as _csi_v1_ControllerExpandVolumeRequest__Output,
} from '../../csi/v1/ControllerExpandVolumeRequest.js';
import type {
  ControllerExpandVolumeResponse as _csi_v1_ControllerExpandVolumeResponse,
  ControllerExpandVolumeResponse__Output as _csi_v1_ControllerExpandVolumeResponse__Output,
} from '../../csi/v1/ControllerExpandVolumeResponse.js';
import type {
  ControllerGetCapabilitiesRequest as _csi_v1_ControllerGetCapabilitiesRequest,
  ControllerGetCapabilitiesRequest__Output as _csi_v1_ControllerGetCapabilitiesRequest__Output,
} from '../../csi/v1/ControllerGetCapabilitiesRequest.js';
import type {
  ControllerGetCapabilitiesResponse as _csi_v1_ControllerGetCapabilitiesResponse,
  ControllerGetCapabilitiesResponse__Output as _csi_v1_ControllerGetCapabilitiesResponse__Output,
} from '../../csi/v1/ControllerGetCapabilitiesResponse.js';
import type {
  ControllerGetVolumeRequest as _csi_v1_ControllerGetVolumeRequest,
  ControllerGetVolumeRequest__Output as _csi_v1_ControllerGetVolumeRequest__Output,
} from '../../csi/v1/ControllerGetVolumeRequest.js';
import type {
  ControllerGetVolumeResponse as _csi_v1_ControllerGetVolumeResponse,
  ControllerGetVolumeResponse__Output as _csi_v1_ControllerGetVolumeResponse__Output,
} from '../../csi/v1/ControllerGetVolumeResponse.js';
import type {
  ControllerModifyVolumeRequest as _csi_v1_ControllerModifyVolumeRequest,
  ControllerModifyVolumeRequest__Output as _csi_v1_ControllerModifyVolumeRequest__Output,
} from '../../csi/v1/ControllerModifyVolumeRequest.js';
import type {
  ControllerModifyVolumeResponse as _csi_v1_ControllerModifyVolumeResponse,
  ControllerModifyVolumeResponse__Output as _csi_v1_ControllerModifyVolumeResponse__Output,
} from '../../csi/v1/ControllerModifyVolumeResponse.js';
import type {
  ControllerPublishVolumeRequest as _csi_v1_ControllerPublishVolumeRequest,
  ControllerPublishVolumeRequest__Output as _csi_v1_ControllerPublishVolumeRequest__Output,
} from '../../csi/v1/ControllerPublishVolumeRequest.js';
import type {
  ControllerPublishVolumeResponse as _csi_v1_ControllerPublishVolumeResponse,
  ControllerPublishVolumeResponse__Output as _csi_v1_ControllerPublishVolumeResponse__Output,
} from '../../csi/v1/ControllerPublishVolumeResponse.js';
import type {
  ControllerUnpublishVolumeRequest as _csi_v1_ControllerUnpublishVolumeRequest,
  ControllerUnpublishVolumeRequest__Output as _csi_v1_ControllerUnpublishVolumeRequest__Output,
} from '../../csi/v1/ControllerUnpublishVolumeRequest.js';
import type {
  ControllerUnpublishVolumeResponse as _csi_v1_ControllerUnpublishVolumeResponse,
  ControllerUnpublishVolumeResponse__Output as _csi_v1_ControllerUnpublishVolumeResponse__Output,
} from '../../csi/v1/ControllerUnpublishVolumeResponse.js';
import type {
  CreateSnapshotRequest as _csi_v1_CreateSnapshotRequest,
  CreateSnapshotRequest__Output as _csi_v1_CreateSnapshotRequest__Output,
} from '../../csi/v1/CreateSnapshotRequest.js';
import type {
  CreateSnapshotResponse as _csi_v1_CreateSnapshotResponse,
  CreateSnapshotResponse__Output as _csi_v1_CreateSnapshotResponse__Output,
} from '../../csi/v1/CreateSnapshotResponse.js';
import type {
  CreateVolumeRequest as _csi_v1_CreateVolumeRequest,
  CreateVolumeRequest__Output as _csi_v1_CreateVolumeRequest__Output,
} from '../../csi/v1/CreateVolumeRequest.js';
import type {
  CreateVolumeResponse as _csi_v1_CreateVolumeResponse,
  CreateVolumeResponse__Output as _csi_v1_CreateVolumeResponse__Output,
} from '../../csi/v1/CreateVolumeResponse.js';
import type {
  DeleteSnapshotRequest as _csi_v1_DeleteSnapshotRequest,
  DeleteSnapshotRequest__Output as _csi_v1_DeleteSnapshotRequest__Output,
} from '../../csi/v1/DeleteSnapshotRequest.js';
import type {
  DeleteSnapshotResponse as _csi_v1_DeleteSnapshotResponse,
  DeleteSnapshotResponse__Output as _csi_v1_DeleteSnapshotResponse__Output,
} from '../../csi/v1/DeleteSnapshotResponse.js';
import type {
  DeleteVolumeRequest as _csi_v1_DeleteVolumeRequest,
  DeleteVolumeRequest__Output as _csi_v1_DeleteVolumeRequest__Output,
} from '../../csi/v1/DeleteVolumeRequest.js';
import type {
  DeleteVolumeResponse as _csi_v1_DeleteVolumeResponse,
  DeleteVolumeResponse__Output as _csi_v1_DeleteVolumeResponse__Output,
} from '../../csi/v1/DeleteVolumeResponse.js';
import type {
  GetCapacityRequest as _csi_v1_GetCapacityRequest,
  GetCapacityRequest__Output as _csi_v1_GetCapacityRequest__Output,
} from '../../csi/v1/GetCapacityRequest.js';
import type {
  GetCapacityResponse as _csi_v1_GetCapacityResponse,
  GetCapacityResponse__Output as _csi_v1_GetCapacityResponse__Output,
} from '../../csi/v1/GetCapacityResponse.js';
import type {
  ListSnapshotsRequest as _csi_v1_ListSnapshotsRequest,
  ListSnapshotsRequest__Output as _csi_v1_ListSnapshotsRequest__Output,
} from '../../csi/v1/ListSnapshotsRequest.js';
import type {
  ListSnapshotsResponse as _csi_v1_ListSnapshotsResponse,
  ListSnapshotsResponse__Output as _csi_v1_ListSnapshotsResponse__Output,
} from '../../csi/v1/ListSnapshotsResponse.js';
import type {
  ListVolumesRequest as _csi_v1_ListVolumesRequest,
  ListVolumesRequest__Output as _csi_v1_ListVolumesRequest__Output,
} from '../../csi/v1/ListVolumesRequest.js';
import type {
  ListVolumesResponse as _csi_v1_ListVolumesResponse,
  ListVolumesResponse__Output as _csi_v1_ListVolumesResponse__Output,
} from '../../csi/v1/ListVolumesResponse.js';
import type {
  ValidateVolumeCapabilitiesRequest as _csi_v1_ValidateVolumeCapabilitiesRequest,
  ValidateVolumeCapabilitiesRequest__Output as _csi_v1_ValidateVolumeCapabilitiesRequest__Output,
} from '../../csi/v1/ValidateVolumeCapabilitiesRequest.js';
import type {
  ValidateVolumeCapabilitiesResponse as _csi_v1_ValidateVolumeCapabilitiesResponse,
  ValidateVolumeCapabilitiesResponse__Output as _csi_v1_ValidateVolumeCapabilitiesResponse__Output,
} from '../../csi/v1/ValidateVolumeCapabilitiesResponse.js';

export interface ControllerClient extends grpc.Client {
  ControllerExpandVolume(
    argument: _csi_v1_ControllerExpandVolumeRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_csi_v1_ControllerExpandVolumeResponse__Output>,
  ): grpc.ClientUnaryCall;
  ControllerExpandVolume(
    argument: _csi_v1_ControllerExpandVolumeRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_csi_v1_ControllerExpandVolumeResponse__Output>,
  ): grpc.ClientUnaryCall;
  ControllerExpandVolume(
    argument: _csi_v1_ControllerExpandVolumeRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_csi_v1_ControllerExpandVolumeResponse__Output>,
  ): grpc.ClientUnaryCall;
  ControllerExpandVolume(
    argument: _csi_v1_ControllerExpandVolumeRequest,
    callback: grpc.requestCallback<_csi_v1_ControllerExpandVolumeResponse__Output>,
  ): grpc.ClientUnaryCall;
  controllerExpandVolume(
    argument: _csi_v1_ControllerExpandVolumeRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_csi_v1_ControllerExpandVolumeResponse__Output>,
  ): grpc.ClientUnaryCall;
  controllerExpandVolume(
    argument: _csi_v1_ControllerExpandVolumeRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_csi_v1_ControllerExpandVolumeResponse__Output>,
  ): grpc.ClientUnaryCall;
  controllerExpandVolume(
    argument: _csi_v1_ControllerExpandVolumeRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_csi_v1_ControllerExpandVolumeResponse__Output>,
  ): grpc.ClientUnaryCall;
  controllerExpandVolume(
    argument: _csi_v1_ControllerExpandVolumeRequest,
    callback: grpc.requestCallback<_csi_v1_ControllerExpandVolumeResponse__Output>,
  ): grpc.ClientUnaryCall;

  ControllerGetCapabilities(
    argument: _csi_v1_ControllerGetCapabilitiesRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_csi_v1_ControllerGetCapabilitiesResponse__Output>,
  ): grpc.ClientUnaryCall;
  ControllerGetCapabilities(
    argument: _csi_v1_ControllerGetCapabilitiesRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_csi_v1_ControllerGetCapabilitiesResponse__Output>,
  ): grpc.ClientUnaryCall;
  ControllerGetCapabilities(
    argument: _csi_v1_ControllerGetCapabilitiesRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_csi_v1_ControllerGetCapabilitiesResponse__Output>,
  ): grpc.ClientUnaryCall;
  ControllerGetCapabilities(
    argument: _csi_v1_ControllerGetCapabilitiesRequest,
    callback: grpc.requestCallback<_csi_v1_ControllerGetCapabilitiesResponse__Output>,
  ): grpc.ClientUnaryCall;
  controllerGetCapabilities(
    argument: _csi_v1_ControllerGetCapabilitiesRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_csi_v1_ControllerGetCapabilitiesResponse__Output>,
  ): grpc.ClientUnaryCall;
  controllerGetCapabilities(
    argument: _csi_v1_ControllerGetCapabilitiesRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_csi_v1_ControllerGetCapabilitiesResponse__Output>,
  ): grpc.ClientUnaryCall;
  controllerGetCapabilities(
    argument: _csi_v1_ControllerGetCapabilitiesRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_csi_v1_ControllerGetCapabilitiesResponse__Output>,
  ): grpc.ClientUnaryCall;
  controllerGetCapabilities(
    argument: _csi_v1_ControllerGetCapabilitiesRequest,
    callback: grpc.requestCallback<_csi_v1_ControllerGetCapabilitiesResponse__Output>,
  ): grpc.ClientUnaryCall;

  ControllerGetVolume(
    argument: _csi_v1_ControllerGetVolumeRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_csi_v1_ControllerGetVolumeResponse__Output>,
  ): grpc.ClientUnaryCall;
  ControllerGetVolume(
    argument: _csi_v1_ControllerGetVolumeRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_csi_v1_ControllerGetVolumeResponse__Output>,
  ): grpc.ClientUnaryCall;
  ControllerGetVolume(
    argument: _csi_v1_ControllerGetVolumeRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_csi_v1_ControllerGetVolumeResponse__Output>,
  ): grpc.ClientUnaryCall;
  ControllerGetVolume(
    argument: _csi_v1_ControllerGetVolumeRequest,
    callback: grpc.requestCallback<_csi_v1_ControllerGetVolumeResponse__Output>,
  ): grpc.ClientUnaryCall;
  controllerGetVolume(
    argument: _csi_v1_ControllerGetVolumeRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_csi_v1_ControllerGetVolumeResponse__Output>,
  ): grpc.ClientUnaryCall;
  controllerGetVolume(
    argument: _csi_v1_ControllerGetVolumeRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_csi_v1_ControllerGetVolumeResponse__Output>,
  ): grpc.ClientUnaryCall;
  controllerGetVolume(
    argument: _csi_v1_ControllerGetVolumeRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_csi_v1_ControllerGetVolumeResponse__Output>,
  ): grpc.ClientUnaryCall;
  controllerGetVolume(
    argument: _csi_v1_ControllerGetVolumeRequest,
    callback: grpc.requestCallback<_csi_v1_ControllerGetVolumeResponse__Output>,
  ): grpc.ClientUnaryCall;

  ControllerModifyVolume(
    argument: _csi_v1_ControllerModifyVolumeRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_csi_v1_ControllerModifyVolumeResponse__Output>,
  ): grpc.ClientUnaryCall;
  ControllerModifyVolume(
    argument: _csi_v1_ControllerModifyVolumeRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_csi_v1_ControllerModifyVolumeResponse__Output>,
  ): grpc.ClientUnaryCall;
  ControllerModifyVolume(
    argument: _csi_v1_ControllerModifyVolumeRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_csi_v1_ControllerModifyVolumeResponse__Output>,
  ): grpc.ClientUnaryCall;
  ControllerModifyVolume(
    argument: _csi_v1_ControllerModifyVolumeRequest,
    callback: grpc.requestCallback<_csi_v1_ControllerModifyVolumeResponse__Output>,
  ): grpc.ClientUnaryCall;
  controllerModifyVolume(
    argument: _csi_v1_ControllerModifyVolumeRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_csi_v1_ControllerModifyVolumeResponse__Output>,
  ): grpc.ClientUnaryCall;
  controllerModifyVolume(
    argument: _csi_v1_ControllerModifyVolumeRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_csi_v1_ControllerModifyVolumeResponse__Output>,
  ): grpc.ClientUnaryCall;
  controllerModifyVolume(
    argument: _csi_v1_ControllerModifyVolumeRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_csi_v1_ControllerModifyVolumeResponse__Output>,
  ): grpc.ClientUnaryCall;
  controllerModifyVolume(
    argument: _csi_v1_ControllerModifyVolumeRequest,
    callback: grpc.requestCallback<_csi_v1_ControllerModifyVolumeResponse__Output>,
  ): grpc.ClientUnaryCall;

  ControllerPublishVolume(
    argument: _csi_v1_ControllerPublishVolumeRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_csi_v1_ControllerPublishVolumeResponse__Output>,
  ): grpc.ClientUnaryCall;
  ControllerPublishVolume(
    argument: _csi_v1_ControllerPublishVolumeRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_csi_v1_ControllerPublishVolumeResponse__Output>,
  ): grpc.ClientUnaryCall;
  ControllerPublishVolume(
    argument: _csi_v1_ControllerPublishVolumeRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_csi_v1_ControllerPublishVolumeResponse__Output>,
  ): grpc.ClientUnaryCall;
  ControllerPublishVolume(
    argument: _csi_v1_ControllerPublishVolumeRequest,
    callback: grpc.requestCallback<_csi_v1_ControllerPublishVolumeResponse__Output>,
  ): grpc.ClientUnaryCall;
  controllerPublishVolume(
    argument: _csi_v1_ControllerPublishVolumeRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_csi_v1_ControllerPublishVolumeResponse__Output>,
  ): grpc.ClientUnaryCall;
  controllerPublishVolume(
    argument: _csi_v1_ControllerPublishVolumeRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_csi_v1_ControllerPublishVolumeResponse__Output>,
  ): grpc.ClientUnaryCall;
  controllerPublishVolume(
    argument: _csi_v1_ControllerPublishVolumeRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_csi_v1_ControllerPublishVolumeResponse__Output>,
  ): grpc.ClientUnaryCall;
  controllerPublishVolume(
    argument: _csi_v1_ControllerPublishVolumeRequest,
    callback: grpc.requestCallback<_csi_v1_ControllerPublishVolumeResponse__Output>,
  ): grpc.ClientUnaryCall;

  ControllerUnpublishVolume(
    argument: _csi_v1_ControllerUnpublishVolumeRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_csi_v1_ControllerUnpublishVolumeResponse__Output>,
  ): grpc.ClientUnaryCall;
  ControllerUnpublishVolume(
    argument: _csi_v1_ControllerUnpublishVolumeRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_csi_v1_ControllerUnpublishVolumeResponse__Output>,
  ): grpc.ClientUnaryCall;
  ControllerUnpublishVolume(
    argument: _csi_v1_ControllerUnpublishVolumeRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_csi_v1_ControllerUnpublishVolumeResponse__Output>,
  ): grpc.ClientUnaryCall;
  ControllerUnpublishVolume(
    argument: _csi_v1_ControllerUnpublishVolumeRequest,
    callback: grpc.requestCallback<_csi_v1_ControllerUnpublishVolumeResponse__Output>,
  ): grpc.ClientUnaryCall;
  controllerUnpublishVolume(
    argument: _csi_v1_ControllerUnpublishVolumeRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_csi_v1_ControllerUnpublishVolumeResponse__Output>,
  ): grpc.ClientUnaryCall;
  controllerUnpublishVolume(
    argument: _csi_v1_ControllerUnpublishVolumeRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_csi_v1_ControllerUnpublishVolumeResponse__Output>,
  ): grpc.ClientUnaryCall;
  controllerUnpublishVolume(
    argument: _csi_v1_ControllerUnpublishVolumeRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_csi_v1_ControllerUnpublishVolumeResponse__Output>,
  ): grpc.ClientUnaryCall;
  controllerUnpublishVolume(
    argument: _csi_v1_ControllerUnpublishVolumeRequest,
    callback: grpc.requestCallback<_csi_v1_ControllerUnpublishVolumeResponse__Output>,
  ): grpc.ClientUnaryCall;

  CreateSnapshot(
    argument: _csi_v1_CreateSnapshotRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_csi_v1_CreateSnapshotResponse__Output>,
  ): grpc.ClientUnaryCall;
  CreateSnapshot(
    argument: _csi_v1_CreateSnapshotRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_csi_v1_CreateSnapshotResponse__Output>,
  ): grpc.ClientUnaryCall;
  CreateSnapshot(
    argument: _csi_v1_CreateSnapshotRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_csi_v1_CreateSnapshotResponse__Output>,
  ): grpc.ClientUnaryCall;
  CreateSnapshot(
    argument: _csi_v1_CreateSnapshotRequest,
    callback: grpc.requestCallback<_csi_v1_CreateSnapshotResponse__Output>,
  ): grpc.ClientUnaryCall;
  createSnapshot(
    argument: _csi_v1_CreateSnapshotRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_csi_v1_CreateSnapshotResponse__Output>,
  ): grpc.ClientUnaryCall;
  createSnapshot(
    argument: _csi_v1_CreateSnapshotRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_csi_v1_CreateSnapshotResponse__Output>,
  ): grpc.ClientUnaryCall;
  createSnapshot(
    argument: _csi_v1_CreateSnapshotRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_csi_v1_CreateSnapshotResponse__Output>,
  ): grpc.ClientUnaryCall;
  createSnapshot(
    argument: _csi_v1_CreateSnapshotRequest,
    callback: grpc.requestCallback<_csi_v1_CreateSnapshotResponse__Output>,
  ): grpc.ClientUnaryCall;

  CreateVolume(
    argument: _csi_v1_CreateVolumeRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_csi_v1_CreateVolumeResponse__Output>,
  ): grpc.ClientUnaryCall;
  CreateVolume(
    argument: _csi_v1_CreateVolumeRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_csi_v1_CreateVolumeResponse__Output>,
  ): grpc.ClientUnaryCall;
  CreateVolume(
    argument: _csi_v1_CreateVolumeRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_csi_v1_CreateVolumeResponse__Output>,
  ): grpc.ClientUnaryCall;
  CreateVolume(
    argument: _csi_v1_CreateVolumeRequest,
    callback: grpc.requestCallback<_csi_v1_CreateVolumeResponse__Output>,
  ): grpc.ClientUnaryCall;
  createVolume(
    argument: _csi_v1_CreateVolumeRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_csi_v1_CreateVolumeResponse__Output>,
  ): grpc.ClientUnaryCall;
  createVolume(
    argument: _csi_v1_CreateVolumeRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_csi_v1_CreateVolumeResponse__Output>,
  ): grpc.ClientUnaryCall;
  createVolume(
    argument: _csi_v1_CreateVolumeRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_csi_v1_CreateVolumeResponse__Output>,
  ): grpc.ClientUnaryCall;
  createVolume(
    argument: _csi_v1_CreateVolumeRequest,
    callback: grpc.requestCallback<_csi_v1_CreateVolumeResponse__Output>,
  ): grpc.ClientUnaryCall;

  DeleteSnapshot(
    argument: _csi_v1_DeleteSnapshotRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_csi_v1_DeleteSnapshotResponse__Output>,
  ): grpc.ClientUnaryCall;
  DeleteSnapshot(
    argument: _csi_v1_DeleteSnapshotRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_csi_v1_DeleteSnapshotResponse__Output>,
  ): grpc.ClientUnaryCall;
  DeleteSnapshot(
    argument: _csi_v1_DeleteSnapshotRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_csi_v1_DeleteSnapshotResponse__Output>,
  ): grpc.ClientUnaryCall;
  DeleteSnapshot(
    argument: _csi_v1_DeleteSnapshotRequest,
    callback: grpc.requestCallback<_csi_v1_DeleteSnapshotResponse__Output>,
  ): grpc.ClientUnaryCall;
  deleteSnapshot(
    argument: _csi_v1_DeleteSnapshotRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_csi_v1_DeleteSnapshotResponse__Output>,
  ): grpc.ClientUnaryCall;
  deleteSnapshot(
    argument: _csi_v1_DeleteSnapshotRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_csi_v1_DeleteSnapshotResponse__Output>,
  ): grpc.ClientUnaryCall;
  deleteSnapshot(
    argument: _csi_v1_DeleteSnapshotRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_csi_v1_DeleteSnapshotResponse__Output>,
  ): grpc.ClientUnaryCall;
  deleteSnapshot(
    argument: _csi_v1_DeleteSnapshotRequest,
    callback: grpc.requestCallback<_csi_v1_DeleteSnapshotResponse__Output>,
  ): grpc.ClientUnaryCall;

  DeleteVolume(
    argument: _csi_v1_DeleteVolumeRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_csi_v1_DeleteVolumeResponse__Output>,
  ): grpc.ClientUnaryCall;
  DeleteVolume(
    argument: _csi_v1_DeleteVolumeRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_csi_v1_DeleteVolumeResponse__Output>,
  ): grpc.ClientUnaryCall;
  DeleteVolume(
    argument: _csi_v1_DeleteVolumeRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_csi_v1_DeleteVolumeResponse__Output>,
  ): grpc.ClientUnaryCall;
  DeleteVolume(
    argument: _csi_v1_DeleteVolumeRequest,
    callback: grpc.requestCallback<_csi_v1_DeleteVolumeResponse__Output>,
  ): grpc.ClientUnaryCall;
  deleteVolume(
    argument: _csi_v1_DeleteVolumeRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_csi_v1_DeleteVolumeResponse__Output>,
  ): grpc.ClientUnaryCall;
  deleteVolume(
    argument: _csi_v1_DeleteVolumeRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_csi_v1_DeleteVolumeResponse__Output>,
  ): grpc.ClientUnaryCall;
  deleteVolume(
    argument: _csi_v1_DeleteVolumeRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_csi_v1_DeleteVolumeResponse__Output>,
  ): grpc.ClientUnaryCall;
  deleteVolume(
    argument: _csi_v1_DeleteVolumeRequest,
    callback: grpc.requestCallback<_csi_v1_DeleteVolumeResponse__Output>,
  ): grpc.ClientUnaryCall;

  GetCapacity(
    argument: _csi_v1_GetCapacityRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_csi_v1_GetCapacityResponse__Output>,
  ): grpc.ClientUnaryCall;
  GetCapacity(
    argument: _csi_v1_GetCapacityRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_csi_v1_GetCapacityResponse__Output>,
  ): grpc.ClientUnaryCall;
  GetCapacity(
    argument: _csi_v1_GetCapacityRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_csi_v1_GetCapacityResponse__Output>,
  ): grpc.ClientUnaryCall;
  GetCapacity(
    argument: _csi_v1_GetCapacityRequest,
    callback: grpc.requestCallback<_csi_v1_GetCapacityResponse__Output>,
  ): grpc.ClientUnaryCall;
  getCapacity(
    argument: _csi_v1_GetCapacityRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_csi_v1_GetCapacityResponse__Output>,
  ): grpc.ClientUnaryCall;
  getCapacity(
    argument: _csi_v1_GetCapacityRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_csi_v1_GetCapacityResponse__Output>,
  ): grpc.ClientUnaryCall;
  getCapacity(
    argument: _csi_v1_GetCapacityRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_csi_v1_GetCapacityResponse__Output>,
  ): grpc.ClientUnaryCall;
  getCapacity(
    argument: _csi_v1_GetCapacityRequest,
    callback: grpc.requestCallback<_csi_v1_GetCapacityResponse__Output>,
  ): grpc.ClientUnaryCall;

  ListSnapshots(
    argument: _csi_v1_ListSnapshotsRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_csi_v1_ListSnapshotsResponse__Output>,
  ): grpc.ClientUnaryCall;
  ListSnapshots(
    argument: _csi_v1_ListSnapshotsRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_csi_v1_ListSnapshotsResponse__Output>,
  ): grpc.ClientUnaryCall;
  ListSnapshots(
    argument: _csi_v1_ListSnapshotsRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_csi_v1_ListSnapshotsResponse__Output>,
  ): grpc.ClientUnaryCall;
  ListSnapshots(
    argument: _csi_v1_ListSnapshotsRequest,
    callback: grpc.requestCallback<_csi_v1_ListSnapshotsResponse__Output>,
  ): grpc.ClientUnaryCall;
  listSnapshots(
    argument: _csi_v1_ListSnapshotsRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_csi_v1_ListSnapshotsResponse__Output>,
  ): grpc.ClientUnaryCall;
  listSnapshots(
    argument: _csi_v1_ListSnapshotsRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_csi_v1_ListSnapshotsResponse__Output>,
  ): grpc.ClientUnaryCall;
  listSnapshots(
    argument: _csi_v1_ListSnapshotsRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_csi_v1_ListSnapshotsResponse__Output>,
  ): grpc.ClientUnaryCall;
  listSnapshots(
    argument: _csi_v1_ListSnapshotsRequest,
    callback: grpc.requestCallback<_csi_v1_ListSnapshotsResponse__Output>,
  ): grpc.ClientUnaryCall;

  ListVolumes(
    argument: _csi_v1_ListVolumesRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_csi_v1_ListVolumesResponse__Output>,
  ): grpc.ClientUnaryCall;
  ListVolumes(
    argument: _csi_v1_ListVolumesRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_csi_v1_ListVolumesResponse__Output>,
  ): grpc.ClientUnaryCall;
  ListVolumes(
    argument: _csi_v1_ListVolumesRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_csi_v1_ListVolumesResponse__Output>,
  ): grpc.ClientUnaryCall;
  ListVolumes(
    argument: _csi_v1_ListVolumesRequest,
    callback: grpc.requestCallback<_csi_v1_ListVolumesResponse__Output>,
  ): grpc.ClientUnaryCall;
  listVolumes(
    argument: _csi_v1_ListVolumesRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_csi_v1_ListVolumesResponse__Output>,
  ): grpc.ClientUnaryCall;
  listVolumes(
    argument: _csi_v1_ListVolumesRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_csi_v1_ListVolumesResponse__Output>,
  ): grpc.ClientUnaryCall;
  listVolumes(
    argument: _csi_v1_ListVolumesRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_csi_v1_ListVolumesResponse__Output>,
  ): grpc.ClientUnaryCall;
  listVolumes(
    argument: _csi_v1_ListVolumesRequest,
    callback: grpc.requestCallback<_csi_v1_ListVolumesResponse__Output>,
  ): grpc.ClientUnaryCall;

  ValidateVolumeCapabilities(
    argument: _csi_v1_ValidateVolumeCapabilitiesRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_csi_v1_ValidateVolumeCapabilitiesResponse__Output>,
  ): grpc.ClientUnaryCall;
  ValidateVolumeCapabilities(
    argument: _csi_v1_ValidateVolumeCapabilitiesRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_csi_v1_ValidateVolumeCapabilitiesResponse__Output>,
  ): grpc.ClientUnaryCall;
  ValidateVolumeCapabilities(
    argument: _csi_v1_ValidateVolumeCapabilitiesRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_csi_v1_ValidateVolumeCapabilitiesResponse__Output>,
  ): grpc.ClientUnaryCall;
  ValidateVolumeCapabilities(
    argument: _csi_v1_ValidateVolumeCapabilitiesRequest,
    callback: grpc.requestCallback<_csi_v1_ValidateVolumeCapabilitiesResponse__Output>,
  ): grpc.ClientUnaryCall;
  validateVolumeCapabilities(
    argument: _csi_v1_ValidateVolumeCapabilitiesRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_csi_v1_ValidateVolumeCapabilitiesResponse__Output>,
  ): grpc.ClientUnaryCall;
  validateVolumeCapabilities(
    argument: _csi_v1_ValidateVolumeCapabilitiesRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_csi_v1_ValidateVolumeCapabilitiesResponse__Output>,
  ): grpc.ClientUnaryCall;
  validateVolumeCapabilities(
    argument: _csi_v1_ValidateVolumeCapabilitiesRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_csi_v1_ValidateVolumeCapabilitiesResponse__Output>,
  ): grpc.ClientUnaryCall;
  validateVolumeCapabilities(
    argument: _csi_v1_ValidateVolumeCapabilitiesRequest,
    callback: grpc.requestCallback<_csi_v1_ValidateVolumeCapabilitiesResponse__Output>,
  ): grpc.ClientUnaryCall;
}

export interface ControllerHandlers extends grpc.UntypedServiceImplementation {
  ControllerExpandVolume: grpc.handleUnaryCall<
    _csi_v1_ControllerExpandVolumeRequest__Output,
    _csi_v1_ControllerExpandVolumeResponse
  >;

  ControllerGetCapabilities: grpc.handleUnaryCall<
    _csi_v1_ControllerGetCapabilitiesRequest__Output,
    _csi_v1_ControllerGetCapabilitiesResponse
  >;

  ControllerGetVolume: grpc.handleUnaryCall<
    _csi_v1_ControllerGetVolumeRequest__Output,
    _csi_v1_ControllerGetVolumeResponse
  >;

  ControllerModifyVolume: grpc.handleUnaryCall<
    _csi_v1_ControllerModifyVolumeRequest__Output,
    _csi_v1_ControllerModifyVolumeResponse
  >;

  ControllerPublishVolume: grpc.handleUnaryCall<
    _csi_v1_ControllerPublishVolumeRequest__Output,
    _csi_v1_ControllerPublishVolumeResponse
  >;

  ControllerUnpublishVolume: grpc.handleUnaryCall<
    _csi_v1_ControllerUnpublishVolumeRequest__Output,
    _csi_v1_ControllerUnpublishVolumeResponse
  >;

  CreateSnapshot: grpc.handleUnaryCall<_csi_v1_CreateSnapshotRequest__Output, _csi_v1_CreateSnapshotResponse>;

  CreateVolume: grpc.handleUnaryCall<_csi_v1_CreateVolumeRequest__Output, _csi_v1_CreateVolumeResponse>;

  DeleteSnapshot: grpc.handleUnaryCall<_csi_v1_DeleteSnapshotRequest__Output, _csi_v1_DeleteSnapshotResponse>;

  DeleteVolume: grpc.handleUnaryCall<_csi_v1_DeleteVolumeRequest__Output, _csi_v1_DeleteVolumeResponse>;

  GetCapacity: grpc.handleUnaryCall<_csi_v1_GetCapacityRequest__Output, _csi_v1_GetCapacityResponse>;

  ListSnapshots: grpc.handleUnaryCall<_csi_v1_ListSnapshotsRequest__Output, _csi_v1_ListSnapshotsResponse>;

  ListVolumes: grpc.handleUnaryCall<_csi_v1_ListVolumesRequest__Output, _csi_v1_ListVolumesResponse>;

  ValidateVolumeCapabilities: grpc.handleUnaryCall<
    _csi_v1_ValidateVolumeCapabilitiesRequest__Output,
    _csi_v1_ValidateVolumeCapabilitiesResponse
  >;
}

export interface ControllerDefinition extends grpc.ServiceDefinition {
  ControllerExpandVolume: MethodDefinition<
    _csi_v1_ControllerExpandVolumeRequest,
    _csi_v1_ControllerExpandVolumeResponse,
    _csi_v1_ControllerExpandVolumeRequest__Output,
    _csi_v1_ControllerExpandVolumeResponse__Output
  >;
  ControllerGetCapabilities: MethodDefinition<
    _csi_v1_ControllerGetCapabilitiesRequest,
    _csi_v1_ControllerGetCapabilitiesResponse,
    _csi_v1_ControllerGetCapabilitiesRequest__Output,
    _csi_v1_ControllerGetCapabilitiesResponse__Output
  >;
  ControllerGetVolume: MethodDefinition<
    _csi_v1_ControllerGetVolumeRequest,
    _csi_v1_ControllerGetVolumeResponse,
    _csi_v1_ControllerGetVolumeRequest__Output,
    _csi_v1_ControllerGetVolumeResponse__Output
  >;
  ControllerModifyVolume: MethodDefinition<
    _csi_v1_ControllerModifyVolumeRequest,
    _csi_v1_ControllerModifyVolumeResponse,
    _csi_v1_ControllerModifyVolumeRequest__Output,
    _csi_v1_ControllerModifyVolumeResponse__Output
  >;
  ControllerPublishVolume: MethodDefinition<
    _csi_v1_ControllerPublishVolumeRequest,
    _csi_v1_ControllerPublishVolumeResponse,
    _csi_v1_ControllerPublishVolumeRequest__Output,
    _csi_v1_ControllerPublishVolumeResponse__Output
  >;
  ControllerUnpublishVolume: MethodDefinition<
    _csi_v1_ControllerUnpublishVolumeRequest,
    _csi_v1_ControllerUnpublishVolumeResponse,
    _csi_v1_ControllerUnpublishVolumeRequest__Output,
    _csi_v1_ControllerUnpublishVolumeResponse__Output
  >;
  CreateSnapshot: MethodDefinition<
    _csi_v1_CreateSnapshotRequest,
    _csi_v1_CreateSnapshotResponse,
    _csi_v1_CreateSnapshotRequest__Output,
    _csi_v1_CreateSnapshotResponse__Output
  >;
  CreateVolume: MethodDefinition<
    _csi_v1_CreateVolumeRequest,
    _csi_v1_CreateVolumeResponse,
    _csi_v1_CreateVolumeRequest__Output,
    _csi_v1_CreateVolumeResponse__Output
  >;
  DeleteSnapshot: MethodDefinition<
    _csi_v1_DeleteSnapshotRequest,
    _csi_v1_DeleteSnapshotResponse,
    _csi_v1_DeleteSnapshotRequest__Output,
    _csi_v1_DeleteSnapshotResponse__Output
  >;
  DeleteVolume: MethodDefinition<
    _csi_v1_DeleteVolumeRequest,
    _csi_v1_DeleteVolumeResponse,
    _csi_v1_DeleteVolumeRequest__Output,
    _csi_v1_DeleteVolumeResponse__Output
  >;
  GetCapacity: MethodDefinition<
    _csi_v1_GetCapacityRequest,
    _csi_v1_GetCapacityResponse,
    _csi_v1_GetCapacityRequest__Output,
    _csi_v1_GetCapacityResponse__Output
  >;
  ListSnapshots: MethodDefinition<
    _csi_v1_ListSnapshotsRequest,
    _csi_v1_ListSnapshotsResponse,
    _csi_v1_ListSnapshotsRequest__Output,
    _csi_v1_ListSnapshotsResponse__Output
  >;
  ListVolumes: MethodDefinition<
    _csi_v1_ListVolumesRequest,
    _csi_v1_ListVolumesResponse,
    _csi_v1_ListVolumesRequest__Output,
    _csi_v1_ListVolumesResponse__Output
  >;
  ValidateVolumeCapabilities: MethodDefinition<
    _csi_v1_ValidateVolumeCapabilitiesRequest,
    _csi_v1_ValidateVolumeCapabilitiesResponse,
    _csi_v1_ValidateVolumeCapabilitiesRequest__Output,
    _csi_v1_ValidateVolumeCapabilitiesResponse__Output
  >;
}
