/**
 * gRPC status → Stowage error, once, at the gRPC edge (CSI drivers, the container runtime). The table is the single source of truth for
 * whether a retry can help (`retryable`) and whether the driver may still be working on the
 * operation (`uncertain`, the kubelet's "non-final" codes: it must assume e.g. a mount happened).
 */
import { status as Status } from '@grpc/grpc-js';
import { StowageError, type ErrorCode } from '../util/errors.js';

interface CodeInfo {
  readonly name: string;
  readonly retryable: boolean;
  readonly uncertain: boolean;
  readonly stowage: ErrorCode;
}

// retryable: the CSI spec's recovery column (ABORTED, UNAVAILABLE, DEADLINE_EXCEEDED: retry with
// backoff) plus CANCELLED; RESOURCE_EXHAUSTED is final here (the caller must free space first).
// uncertain: kubelet csi_client isFinalError (CANCELLED, DEADLINE_EXCEEDED, UNAVAILABLE,
// RESOURCE_EXHAUSTED, ABORTED are not final: the operation may be in progress on the driver).
export const GRPC_CODES: Readonly<Record<Status, CodeInfo>> = {
  [Status.OK]: { name: 'OK', retryable: false, uncertain: false, stowage: 'Internal' },
  [Status.CANCELLED]: { name: 'CANCELLED', retryable: true, uncertain: true, stowage: 'Unavailable' },
  [Status.UNKNOWN]: { name: 'UNKNOWN', retryable: true, uncertain: false, stowage: 'Internal' },
  [Status.INVALID_ARGUMENT]: { name: 'INVALID_ARGUMENT', retryable: false, uncertain: false, stowage: 'BadRequest' },
  [Status.DEADLINE_EXCEEDED]: { name: 'DEADLINE_EXCEEDED', retryable: true, uncertain: true, stowage: 'Timeout' },
  [Status.NOT_FOUND]: { name: 'NOT_FOUND', retryable: false, uncertain: false, stowage: 'NotFound' },
  [Status.ALREADY_EXISTS]: { name: 'ALREADY_EXISTS', retryable: false, uncertain: false, stowage: 'AlreadyExists' },
  [Status.PERMISSION_DENIED]: { name: 'PERMISSION_DENIED', retryable: false, uncertain: false, stowage: 'Forbidden' },
  [Status.RESOURCE_EXHAUSTED]: {
    name: 'RESOURCE_EXHAUSTED',
    retryable: false,
    uncertain: true,
    stowage: 'Unavailable',
  },
  [Status.FAILED_PRECONDITION]: {
    name: 'FAILED_PRECONDITION',
    retryable: false,
    uncertain: false,
    stowage: 'BadRequest',
  },
  [Status.ABORTED]: { name: 'ABORTED', retryable: true, uncertain: true, stowage: 'Conflict' },
  [Status.OUT_OF_RANGE]: { name: 'OUT_OF_RANGE', retryable: false, uncertain: false, stowage: 'Invalid' },
  [Status.UNIMPLEMENTED]: { name: 'UNIMPLEMENTED', retryable: false, uncertain: false, stowage: 'MethodNotAllowed' },
  [Status.INTERNAL]: { name: 'INTERNAL', retryable: true, uncertain: false, stowage: 'Internal' },
  [Status.UNAVAILABLE]: { name: 'UNAVAILABLE', retryable: true, uncertain: true, stowage: 'Unavailable' },
  [Status.DATA_LOSS]: { name: 'DATA_LOSS', retryable: false, uncertain: false, stowage: 'Internal' },
  [Status.UNAUTHENTICATED]: { name: 'UNAUTHENTICATED', retryable: false, uncertain: false, stowage: 'Unauthorized' },
};

export type GrpcCodeName = string;

export function grpcCodeName(code: number): GrpcCodeName {
  return (GRPC_CODES as Record<number, CodeInfo | undefined>)[code]?.name ?? `CODE_${code}`;
}

/**
 * A failed gRPC call to a local plugin (CSI driver, container runtime). `code` is the Stowage
 * category; `grpcCode` the exact status from the peer.
 */
export abstract class GrpcError extends StowageError {
  readonly code: ErrorCode;
  readonly retryable: boolean;
  /** The peer may have started or finished the operation (timeouts, cancellation, ABORTED...). */
  readonly uncertain: boolean;
  readonly grpcCodeName: GrpcCodeName;
  constructor(
    readonly method: string,
    readonly grpcCode: Status,
    readonly details: string,
    options?: { cause?: unknown },
  ) {
    const info = (GRPC_CODES as Record<number, CodeInfo | undefined>)[grpcCode] ?? GRPC_CODES[Status.UNKNOWN];
    super(`${method}: ${info.name}: ${details}`, options);
    this.code = info.stowage;
    this.retryable = info.retryable;
    this.uncertain = info.uncertain;
    this.grpcCodeName = info.name;
  }
}

/** A failed CSI call. */
export class CsiError extends GrpcError {}

/** How a gRPC edge turns whatever a call rejected with into its own error class. */
export type GrpcErrorFactory<E extends GrpcError> = (
  method: string,
  grpcCode: Status,
  details: string,
  options?: { cause?: unknown },
) => E;

function isServiceError(e: unknown): e is { code: number; details: string; message: string } {
  return (
    typeof e === 'object' &&
    e !== null &&
    typeof (e as { code?: unknown }).code === 'number' &&
    typeof (e as { details?: unknown }).details === 'string'
  );
}

/** Normalises a rejection with `make`; an error already of class `cls` passes through; anything that is not a status becomes UNKNOWN. */
export function toGrpcError<E extends GrpcError>(
  cls: abstract new (...a: never[]) => E,
  make: GrpcErrorFactory<E>,
  method: string,
  e: unknown,
): E {
  if (e instanceof cls) return e;
  if (isServiceError(e)) return make(method, e.code as Status, e.details, { cause: e });
  const msg = e instanceof Error ? e.message : String(e);
  return make(method, Status.UNKNOWN, msg, { cause: e });
}

const newCsiError: GrpcErrorFactory<CsiError> = (m, c, d, o) => new CsiError(m, c, d, o);

/** Normalises whatever a CSI call rejected with. */
export function toCsiError(method: string, e: unknown): CsiError {
  return toGrpcError(CsiError, newCsiError, method, e);
}
