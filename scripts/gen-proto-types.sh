#!/bin/sh
# Regenerates the checked-in TypeScript types for our .proto files. The flags mirror the loader
# options in src/csi/proto/index.ts (camelCase fields, longs as Number, enums as String,
# defaults and virtual oneof fields on output); keep both in step.
set -eu
cd "$(dirname "$0")/.."
gen() { # <proto dir> <files...>
  dir=$1; shift
  rm -rf "$dir/generated"
  node node_modules/@grpc/proto-loader/build/bin/proto-loader-gen-types.js \
    --longs=Number --enums=String --defaults --oneofs \
    --grpcLib=@grpc/grpc-js --importFileExtension=.js \
    -I "$dir" -O "$dir/generated" "$@"
}
gen src/csi/proto csi.proto pluginregistration.proto
gen src/node/runtime/proto cri.proto
