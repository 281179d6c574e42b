#!/bin/sh
# Regenerates the checked-in TypeScript types for our .proto files. The flags mirror the loader
# options in src/csi/proto/index.ts (camelCase fields, longs as Number, enums as String,
# defaults and virtual oneof fields on output); keep both in step.
set -eu
cd "$(dirname "$0")/.."
out=src/csi/proto/generated
rm -rf "$out"
node node_modules/@grpc/proto-loader/build/bin/proto-loader-gen-types.js \
  --longs=Number --enums=String --defaults --oneofs \
  --grpcLib=@grpc/grpc-js --importFileExtension=.js \
  -I src/csi/proto -O "$out" \
  csi.proto pluginregistration.proto
