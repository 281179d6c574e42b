/**
 * Loads Stowage's CRI subset (cri.proto, package runtime.v1) with the loader convention of
 * src/csi/proto (camelCase fields, int64 as Number, enums as names). CRI timestamps are int64
 * nanoseconds: as Numbers they are exact to ~256 ns, which no decision here depends on.
 */
import { join } from 'node:path';
import type * as grpc from '@grpc/grpc-js';
import { findProtoDir, loadProto } from '../../../csi/proto/index.js';
import type { ProtoGrpcType as CriGrpcType } from './generated/cri.js';

export function criProtoDir(): string {
  return findProtoDir(import.meta.url, join('src', 'node', 'runtime', 'proto'), 'cri.proto');
}

let cache: CriGrpcType | undefined;

/** The `runtime.v1` package: `.RuntimeService` and `.ImageService` client constructors with `.service` definitions. */
export function criProto(): CriGrpcType {
  // The one place the untyped loader output meets the generated types; the flags match.
  cache ??= loadProto(criProtoDir(), 'cri.proto') as unknown as CriGrpcType;
  return cache;
}

export function criServices(): { runtime: grpc.ServiceDefinition; image: grpc.ServiceDefinition } {
  const v1 = criProto().runtime.v1;
  return { runtime: v1.RuntimeService.service, image: v1.ImageService.service };
}
