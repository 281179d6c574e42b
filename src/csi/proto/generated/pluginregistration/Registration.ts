// Original file: src/csi/proto/pluginregistration.proto

import type * as grpc from '@grpc/grpc-js';
import type { MethodDefinition } from '@grpc/proto-loader';
import type {
  InfoRequest as _pluginregistration_InfoRequest,
  InfoRequest__Output as _pluginregistration_InfoRequest__Output,
} from '../pluginregistration/InfoRequest.js';
import type {
  PluginInfo as _pluginregistration_PluginInfo,
  PluginInfo__Output as _pluginregistration_PluginInfo__Output,
} from '../pluginregistration/PluginInfo.js';
import type {
  RegistrationStatus as _pluginregistration_RegistrationStatus,
  RegistrationStatus__Output as _pluginregistration_RegistrationStatus__Output,
} from '../pluginregistration/RegistrationStatus.js';
import type {
  RegistrationStatusResponse as _pluginregistration_RegistrationStatusResponse,
  RegistrationStatusResponse__Output as _pluginregistration_RegistrationStatusResponse__Output,
} from '../pluginregistration/RegistrationStatusResponse.js';

export interface RegistrationClient extends grpc.Client {
  GetInfo(
    argument: _pluginregistration_InfoRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_pluginregistration_PluginInfo__Output>,
  ): grpc.ClientUnaryCall;
  GetInfo(
    argument: _pluginregistration_InfoRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_pluginregistration_PluginInfo__Output>,
  ): grpc.ClientUnaryCall;
  GetInfo(
    argument: _pluginregistration_InfoRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_pluginregistration_PluginInfo__Output>,
  ): grpc.ClientUnaryCall;
  GetInfo(
    argument: _pluginregistration_InfoRequest,
    callback: grpc.requestCallback<_pluginregistration_PluginInfo__Output>,
  ): grpc.ClientUnaryCall;
  getInfo(
    argument: _pluginregistration_InfoRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_pluginregistration_PluginInfo__Output>,
  ): grpc.ClientUnaryCall;
  getInfo(
    argument: _pluginregistration_InfoRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_pluginregistration_PluginInfo__Output>,
  ): grpc.ClientUnaryCall;
  getInfo(
    argument: _pluginregistration_InfoRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_pluginregistration_PluginInfo__Output>,
  ): grpc.ClientUnaryCall;
  getInfo(
    argument: _pluginregistration_InfoRequest,
    callback: grpc.requestCallback<_pluginregistration_PluginInfo__Output>,
  ): grpc.ClientUnaryCall;

  NotifyRegistrationStatus(
    argument: _pluginregistration_RegistrationStatus,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_pluginregistration_RegistrationStatusResponse__Output>,
  ): grpc.ClientUnaryCall;
  NotifyRegistrationStatus(
    argument: _pluginregistration_RegistrationStatus,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_pluginregistration_RegistrationStatusResponse__Output>,
  ): grpc.ClientUnaryCall;
  NotifyRegistrationStatus(
    argument: _pluginregistration_RegistrationStatus,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_pluginregistration_RegistrationStatusResponse__Output>,
  ): grpc.ClientUnaryCall;
  NotifyRegistrationStatus(
    argument: _pluginregistration_RegistrationStatus,
    callback: grpc.requestCallback<_pluginregistration_RegistrationStatusResponse__Output>,
  ): grpc.ClientUnaryCall;
  notifyRegistrationStatus(
    argument: _pluginregistration_RegistrationStatus,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_pluginregistration_RegistrationStatusResponse__Output>,
  ): grpc.ClientUnaryCall;
  notifyRegistrationStatus(
    argument: _pluginregistration_RegistrationStatus,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_pluginregistration_RegistrationStatusResponse__Output>,
  ): grpc.ClientUnaryCall;
  notifyRegistrationStatus(
    argument: _pluginregistration_RegistrationStatus,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_pluginregistration_RegistrationStatusResponse__Output>,
  ): grpc.ClientUnaryCall;
  notifyRegistrationStatus(
    argument: _pluginregistration_RegistrationStatus,
    callback: grpc.requestCallback<_pluginregistration_RegistrationStatusResponse__Output>,
  ): grpc.ClientUnaryCall;
}

export interface RegistrationHandlers extends grpc.UntypedServiceImplementation {
  GetInfo: grpc.handleUnaryCall<_pluginregistration_InfoRequest__Output, _pluginregistration_PluginInfo>;

  NotifyRegistrationStatus: grpc.handleUnaryCall<
    _pluginregistration_RegistrationStatus__Output,
    _pluginregistration_RegistrationStatusResponse
  >;
}

export interface RegistrationDefinition extends grpc.ServiceDefinition {
  GetInfo: MethodDefinition<
    _pluginregistration_InfoRequest,
    _pluginregistration_PluginInfo,
    _pluginregistration_InfoRequest__Output,
    _pluginregistration_PluginInfo__Output
  >;
  NotifyRegistrationStatus: MethodDefinition<
    _pluginregistration_RegistrationStatus,
    _pluginregistration_RegistrationStatusResponse,
    _pluginregistration_RegistrationStatus__Output,
    _pluginregistration_RegistrationStatusResponse__Output
  >;
}
