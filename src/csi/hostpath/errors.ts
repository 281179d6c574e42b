import { status as Status, type ServiceError } from '@grpc/grpc-js';
import { Metadata } from '@grpc/grpc-js';
import { MountError } from '../../mount/exec.js';

/** A CSI failure with the exact gRPC code the spec asks for. Thrown by handlers, sent as-is. */
export class CsiStatusError extends Error {
  constructor(
    readonly grpcCode: Status,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'CsiStatusError';
  }
}

export const invalidArgument = (msg: string): CsiStatusError => new CsiStatusError(Status.INVALID_ARGUMENT, msg);
/** INVALID_ARGUMENT naming the missing field, e.g. "volume_id is required". */
export const missing = (field: string): CsiStatusError => invalidArgument(`${field} is required`);
export const notFound = (msg: string): CsiStatusError => new CsiStatusError(Status.NOT_FOUND, msg);
export const alreadyExists = (msg: string): CsiStatusError => new CsiStatusError(Status.ALREADY_EXISTS, msg);
export const outOfRange = (msg: string): CsiStatusError => new CsiStatusError(Status.OUT_OF_RANGE, msg);
export const resourceExhausted = (msg: string): CsiStatusError => new CsiStatusError(Status.RESOURCE_EXHAUSTED, msg);
export const failedPrecondition = (msg: string): CsiStatusError => new CsiStatusError(Status.FAILED_PRECONDITION, msg);
export const aborted = (msg: string): CsiStatusError => new CsiStatusError(Status.ABORTED, msg);
export const unimplemented = (msg: string): CsiStatusError => new CsiStatusError(Status.UNIMPLEMENTED, msg);

/** Converts anything a handler threw into a gRPC ServiceError; unknown failures become INTERNAL. */
export function toServiceError(e: unknown): Partial<ServiceError> {
  if (e instanceof CsiStatusError) return { code: e.grpcCode, details: e.message, metadata: new Metadata() };
  const details = e instanceof MountError ? e.message : e instanceof Error ? e.message : String(e);
  return { code: Status.INTERNAL, details, metadata: new Metadata() };
}
