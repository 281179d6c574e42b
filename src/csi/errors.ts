/**
 * gRPC status → Stowage error, once, at the CSI edge. The table is the single source of truth for
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
  [Status.RESOURCE_EXHAUSTED]: { name: 'RESOURCE_EXHAUSTED', retryable: false, uncertain: true, stowage: 'Unavailable' },
  [Status.FAILED_PRECONDITION]: { name: 'FAILED_PRECONDITION', retryable: false, uncertain: false, stowage: 'BadRequest' },
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

/** A failed CSI call. `code` is the Stowage category; `grpcCode` the exact status from the driver. */
export class CsiError extends StowageError {
  readonly code: ErrorCode;
  readonly retryable: boolean;
  /** The driver may have started or finished the operation (timeouts, cancellation, ABORTED...). */
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

function isServiceError(e: unknown): e is { code: number; details: string; message: string } {
  return typeof e === 'object' && e !== null && typeof (e as { code?: unknown }).code === 'number' &&
    typeof (e as { details?: unknown }).details === 'string';
}

/** Normalises whatever a gRPC call rejected with; anything that is not a status becomes UNKNOWN. */
export function toCsiError(method: string, e: unknown): CsiError {
  if (e instanceof CsiError) return e;
  if (isServiceError(e)) return new CsiError(method, e.code as Status, e.details, { cause: e });
  const msg = e instanceof Error ? e.message : String(e);
  return new CsiError(method, Status.UNKNOWN, msg, { cause: e });
}
