/** Serving a gRPC server on a unix socket that only its owner may use (the kubelet runs as root). */
import { chmod, rm } from 'node:fs/promises';
import * as grpc from '@grpc/grpc-js';

/**
 * Binds `server` to `path` with umask 077 in force, as upstream does, then chmods 0600 to be sure:
 * the umask is process-wide, and a concurrent file creation elsewhere could in theory race it.
 */
export async function bindPrivateSocket(server: grpc.Server, path: string): Promise<void> {
  const old = process.umask(0o077);
  try {
    await new Promise<number>((resolve, reject) =>
      server.bindAsync(`unix://${path}`, grpc.ServerCredentials.createInsecure(), (err, port) =>
        err ? reject(err) : resolve(port),
      ),
    );
  } finally {
    process.umask(old);
  }
  await chmod(path, 0o600);
}

/** Removes a socket file; a missing file is fine (idempotent). */
export async function removeSocket(path: string): Promise<void> {
  await rm(path, { force: true });
}
