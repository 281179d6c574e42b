/** Small gRPC helpers shared by the CSI client, the registration client and the registrar. */
import { resolve } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import type { MethodDefinition } from '@grpc/proto-loader';
import { toCsiError, type GrpcError } from './errors.js';

/**
 * Accepts `unix:///abs/path`, `unix:/abs/path`, `unix://rel` or a bare filesystem path (as
 * node-driver-registrar's --csi-address does) and returns the socket's absolute path.
 */
export function socketPath(endpoint: string): string {
  let p = endpoint;
  if (p.startsWith('unix://')) p = p.slice('unix://'.length);
  else if (p.startsWith('unix:')) p = p.slice('unix:'.length);
  if (p === '') throw new Error(`empty unix socket path in endpoint ${JSON.stringify(endpoint)}`);
  return resolve(p);
}

/** The grpc-js target for a socket path. */
export function unixTarget(path: string): string {
  return `unix://${path}`;
}

// Reconnect quickly to a local socket: a driver that restarts is back within milliseconds, and
// grpc's default 1 s initial / 120 s max backoff would leave us idle long after it returned.
export const CHANNEL_OPTIONS: grpc.ChannelOptions = {
  'grpc.initial_reconnect_backoff_ms': 100,
  'grpc.min_reconnect_backoff_ms': 100,
  'grpc.max_reconnect_backoff_ms': 5_000,
  'grpc.max_receive_message_length': 16 * 1024 * 1024,
};

export function newClient(endpoint: string): grpc.Client {
  return new grpc.Client(unixTarget(socketPath(endpoint)), grpc.credentials.createInsecure(), CHANNEL_OPTIONS);
}

/** Resolves once the channel is READY; rejects with the last state when `timeoutMs` passes or `signal` aborts. */
export function waitReady(client: grpc.Client, timeoutMs: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolveReady, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = (): void => reject(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    client.waitForReady(Date.now() + timeoutMs, (err) => {
      signal?.removeEventListener('abort', onAbort);
      if (err) reject(err);
      else resolveReady();
    });
  });
}

// The generated method definitions carry request/response types in four positions; only the input
// request and output response matter to a caller.
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- variance of the unused positions
export type AnyMethod<Req, Res> = MethodDefinition<Req, any, any, Res>;

/**
 * One unary call with a deadline. Rejects with `toError`'s error, a CsiError by default (also
 * when `signal` aborts: CANCELLED).
 */
export function unary<Req, Res>(
  client: grpc.Client,
  def: AnyMethod<Req, Res>,
  req: Req,
  timeoutMs: number,
  signal?: AbortSignal,
  toError: (method: string, e: unknown) => GrpcError = toCsiError,
): Promise<Res> {
  return new Promise<Res>((resolveCall, reject) => {
    if (signal?.aborted)
      return reject(toError(def.path, { code: grpc.status.CANCELLED, details: 'aborted before start' }));
    const call = client.makeUnaryRequest<Req, Res>(
      def.path,
      def.requestSerialize,
      def.responseDeserialize,
      req,
      new grpc.Metadata(),
      { deadline: Date.now() + timeoutMs },
      (err, res) => {
        signal?.removeEventListener('abort', onAbort);
        if (err) reject(toError(def.path, err));
        else if (res === undefined) reject(toError(def.path, new Error('empty response')));
        else resolveCall(res);
      },
    );
    const onAbort = (): void => call.cancel();
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
