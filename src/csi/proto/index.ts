/**
 * Loads Stowage's own .proto files with @grpc/proto-loader.
 *
 * Loader convention (shared by every CSI client and server in Stowage; the checked-in types in
 * ./generated are produced with the same flags by scripts/gen-proto-types.sh):
 * - `keepCase: false`: fields are camelCase in JS (`volumeId`, `stagingTargetPath`); the wire
 *   still carries the spec's field numbers, so peers using snake_case are unaffected.
 * - `longs: Number`: int64 values are JS numbers. Byte counts are exact up to 2^53 (8 PiB).
 * - `enums: String`: enum values are their names (`'SINGLE_NODE_WRITER'`); numbers are also
 *   accepted when sending.
 * - `defaults: true`: scalar, repeated and map fields are always present on received messages;
 *   unset message fields are `null`.
 * - `oneofs: true`: a virtual field names the member that is set (`accessType: 'mount'`).
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type { ProtoGrpcType as CsiGrpcType } from './generated/csi.js';
import type { ProtoGrpcType as RegistrationGrpcType } from './generated/pluginregistration.js';

export const LOADER_OPTIONS: protoLoader.Options = {
  keepCase: false,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
};

/**
 * The directory holding `file`, a .proto of ours kept in `srcDir` (relative to the package root)
 * beside the module at `moduleUrl`. tsc does not copy .proto files, so from dist/ we walk up to
 * the package root and use src/...; under vitest the files sit beside the module.
 */
export function findProtoDir(moduleUrl: string, srcDir: string, file: string): string {
  const here = dirname(fileURLToPath(moduleUrl));
  if (existsSync(join(here, file))) return here;
  let dir = here;
  for (;;) {
    const candidate = join(dir, srcDir);
    if (existsSync(join(dir, 'package.json')) && existsSync(join(candidate, file))) return candidate;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`${file} not found above ${here}`);
    dir = parent;
  }
}

/** The directory holding csi.proto. */
export function protoDir(): string {
  return findProtoDir(import.meta.url, join('src', 'csi', 'proto'), 'csi.proto');
}

let csiCache: CsiGrpcType | undefined;
let regCache: RegistrationGrpcType | undefined;

/** Loads `file` from `dir` with the loader convention above. */
export function loadProto(dir: string, file: string): grpc.GrpcObject {
  const def = protoLoader.loadSync(join(dir, file), { ...LOADER_OPTIONS, includeDirs: [dir] });
  return grpc.loadPackageDefinition(def);
}

function load(file: string): grpc.GrpcObject {
  return loadProto(protoDir(), file);
}

/** The `csi.v1` package: `csi().csi.v1.Identity` etc. are client constructors; `.service` is the server definition. */
export function csiProto(): CsiGrpcType {
  // The cast is the one place the untyped loader output meets the generated types; the flags match.
  csiCache ??= load('csi.proto') as unknown as CsiGrpcType;
  return csiCache;
}

/** The `pluginregistration` package (kubelet plugin-registration API). */
export function registrationProto(): RegistrationGrpcType {
  regCache ??= load('pluginregistration.proto') as unknown as RegistrationGrpcType;
  return regCache;
}

/** Server-side service definitions, for `server.addService(...)`. */
export function csiServices(): {
  identity: grpc.ServiceDefinition;
  controller: grpc.ServiceDefinition;
  node: grpc.ServiceDefinition;
} {
  const v1 = csiProto().csi.v1;
  return { identity: v1.Identity.service, controller: v1.Controller.service, node: v1.Node.service };
}

export function registrationService(): grpc.ServiceDefinition {
  return registrationProto().pluginregistration.Registration.service;
}
