// Original file: src/node/runtime/proto/cri.proto

import type * as grpc from '@grpc/grpc-js';
import type { MethodDefinition } from '@grpc/proto-loader';
import type {
  ImageStatusRequest as _runtime_v1_ImageStatusRequest,
  ImageStatusRequest__Output as _runtime_v1_ImageStatusRequest__Output,
} from '../../runtime/v1/ImageStatusRequest.js';
import type {
  ImageStatusResponse as _runtime_v1_ImageStatusResponse,
  ImageStatusResponse__Output as _runtime_v1_ImageStatusResponse__Output,
} from '../../runtime/v1/ImageStatusResponse.js';
import type {
  PullImageRequest as _runtime_v1_PullImageRequest,
  PullImageRequest__Output as _runtime_v1_PullImageRequest__Output,
} from '../../runtime/v1/PullImageRequest.js';
import type {
  PullImageResponse as _runtime_v1_PullImageResponse,
  PullImageResponse__Output as _runtime_v1_PullImageResponse__Output,
} from '../../runtime/v1/PullImageResponse.js';
import type {
  RemoveImageRequest as _runtime_v1_RemoveImageRequest,
  RemoveImageRequest__Output as _runtime_v1_RemoveImageRequest__Output,
} from '../../runtime/v1/RemoveImageRequest.js';
import type {
  RemoveImageResponse as _runtime_v1_RemoveImageResponse,
  RemoveImageResponse__Output as _runtime_v1_RemoveImageResponse__Output,
} from '../../runtime/v1/RemoveImageResponse.js';

export interface ImageServiceClient extends grpc.Client {
  ImageStatus(
    argument: _runtime_v1_ImageStatusRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_runtime_v1_ImageStatusResponse__Output>,
  ): grpc.ClientUnaryCall;
  ImageStatus(
    argument: _runtime_v1_ImageStatusRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_runtime_v1_ImageStatusResponse__Output>,
  ): grpc.ClientUnaryCall;
  ImageStatus(
    argument: _runtime_v1_ImageStatusRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_runtime_v1_ImageStatusResponse__Output>,
  ): grpc.ClientUnaryCall;
  ImageStatus(
    argument: _runtime_v1_ImageStatusRequest,
    callback: grpc.requestCallback<_runtime_v1_ImageStatusResponse__Output>,
  ): grpc.ClientUnaryCall;
  imageStatus(
    argument: _runtime_v1_ImageStatusRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_runtime_v1_ImageStatusResponse__Output>,
  ): grpc.ClientUnaryCall;
  imageStatus(
    argument: _runtime_v1_ImageStatusRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_runtime_v1_ImageStatusResponse__Output>,
  ): grpc.ClientUnaryCall;
  imageStatus(
    argument: _runtime_v1_ImageStatusRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_runtime_v1_ImageStatusResponse__Output>,
  ): grpc.ClientUnaryCall;
  imageStatus(
    argument: _runtime_v1_ImageStatusRequest,
    callback: grpc.requestCallback<_runtime_v1_ImageStatusResponse__Output>,
  ): grpc.ClientUnaryCall;

  PullImage(
    argument: _runtime_v1_PullImageRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_runtime_v1_PullImageResponse__Output>,
  ): grpc.ClientUnaryCall;
  PullImage(
    argument: _runtime_v1_PullImageRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_runtime_v1_PullImageResponse__Output>,
  ): grpc.ClientUnaryCall;
  PullImage(
    argument: _runtime_v1_PullImageRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_runtime_v1_PullImageResponse__Output>,
  ): grpc.ClientUnaryCall;
  PullImage(
    argument: _runtime_v1_PullImageRequest,
    callback: grpc.requestCallback<_runtime_v1_PullImageResponse__Output>,
  ): grpc.ClientUnaryCall;
  pullImage(
    argument: _runtime_v1_PullImageRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_runtime_v1_PullImageResponse__Output>,
  ): grpc.ClientUnaryCall;
  pullImage(
    argument: _runtime_v1_PullImageRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_runtime_v1_PullImageResponse__Output>,
  ): grpc.ClientUnaryCall;
  pullImage(
    argument: _runtime_v1_PullImageRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_runtime_v1_PullImageResponse__Output>,
  ): grpc.ClientUnaryCall;
  pullImage(
    argument: _runtime_v1_PullImageRequest,
    callback: grpc.requestCallback<_runtime_v1_PullImageResponse__Output>,
  ): grpc.ClientUnaryCall;

  RemoveImage(
    argument: _runtime_v1_RemoveImageRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_runtime_v1_RemoveImageResponse__Output>,
  ): grpc.ClientUnaryCall;
  RemoveImage(
    argument: _runtime_v1_RemoveImageRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_runtime_v1_RemoveImageResponse__Output>,
  ): grpc.ClientUnaryCall;
  RemoveImage(
    argument: _runtime_v1_RemoveImageRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_runtime_v1_RemoveImageResponse__Output>,
  ): grpc.ClientUnaryCall;
  RemoveImage(
    argument: _runtime_v1_RemoveImageRequest,
    callback: grpc.requestCallback<_runtime_v1_RemoveImageResponse__Output>,
  ): grpc.ClientUnaryCall;
  removeImage(
    argument: _runtime_v1_RemoveImageRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_runtime_v1_RemoveImageResponse__Output>,
  ): grpc.ClientUnaryCall;
  removeImage(
    argument: _runtime_v1_RemoveImageRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_runtime_v1_RemoveImageResponse__Output>,
  ): grpc.ClientUnaryCall;
  removeImage(
    argument: _runtime_v1_RemoveImageRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_runtime_v1_RemoveImageResponse__Output>,
  ): grpc.ClientUnaryCall;
  removeImage(
    argument: _runtime_v1_RemoveImageRequest,
    callback: grpc.requestCallback<_runtime_v1_RemoveImageResponse__Output>,
  ): grpc.ClientUnaryCall;
}

export interface ImageServiceHandlers extends grpc.UntypedServiceImplementation {
  ImageStatus: grpc.handleUnaryCall<_runtime_v1_ImageStatusRequest__Output, _runtime_v1_ImageStatusResponse>;

  PullImage: grpc.handleUnaryCall<_runtime_v1_PullImageRequest__Output, _runtime_v1_PullImageResponse>;

  RemoveImage: grpc.handleUnaryCall<_runtime_v1_RemoveImageRequest__Output, _runtime_v1_RemoveImageResponse>;
}

export interface ImageServiceDefinition extends grpc.ServiceDefinition {
  ImageStatus: MethodDefinition<
    _runtime_v1_ImageStatusRequest,
    _runtime_v1_ImageStatusResponse,
    _runtime_v1_ImageStatusRequest__Output,
    _runtime_v1_ImageStatusResponse__Output
  >;
  PullImage: MethodDefinition<
    _runtime_v1_PullImageRequest,
    _runtime_v1_PullImageResponse,
    _runtime_v1_PullImageRequest__Output,
    _runtime_v1_PullImageResponse__Output
  >;
  RemoveImage: MethodDefinition<
    _runtime_v1_RemoveImageRequest,
    _runtime_v1_RemoveImageResponse,
    _runtime_v1_RemoveImageRequest__Output,
    _runtime_v1_RemoveImageResponse__Output
  >;
}
