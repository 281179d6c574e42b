/**
 * Stowage's error vocabulary. Every edge (HTTP, gRPC, store) turns what it catches into one of
 * these once, with `toStowageError`, so inner code can decide by `instanceof` and `retryable`.
 */
export const ERROR_CODES = [
  'NotFound',
  'AlreadyExists',
  'Conflict',
  'Invalid',
  'BadRequest',
  'Expired',
  'Gone',
  'Unauthorized',
  'Forbidden',
  'MethodNotAllowed',
  'UnsupportedMediaType',
  'NotAcceptable',
  'RequestEntityTooLarge',
  'TooManyRequests',
  'Timeout',
  'Unavailable',
  'Internal',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

export abstract class StowageError extends Error {
  abstract readonly code: ErrorCode;
  abstract readonly retryable: boolean;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

export class NotFoundError extends StowageError {
  readonly code = 'NotFound';
  readonly retryable = false;
}
export class AlreadyExistsError extends StowageError {
  readonly code = 'AlreadyExists';
  readonly retryable = false;
}
/** Optimistic concurrency lost: re-read and try again. */
export class ConflictError extends StowageError {
  readonly code = 'Conflict';
  readonly retryable = true;
}
/** A field-level validation failure; `causes` name the fields (Kubernetes StatusCause). */
export class InvalidError extends StowageError {
  readonly code = 'Invalid';
  readonly retryable = false;
  constructor(
    message: string,
    readonly causes: readonly FieldCause[] = [],
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
export class BadRequestError extends StowageError {
  readonly code = 'BadRequest';
  readonly retryable = false;
}
/** The request body's Content-Type is not one this endpoint accepts (HTTP 415). */
export class UnsupportedMediaTypeError extends StowageError {
  readonly code = 'UnsupportedMediaType';
  readonly retryable = false;
}
/** A revision older than the retained history was asked for (HTTP 410 Expired). */
export class ExpiredError extends StowageError {
  readonly code = 'Expired';
  readonly retryable = false;
}
export class UnauthorizedError extends StowageError {
  readonly code = 'Unauthorized';
  readonly retryable = false;
}
export class ForbiddenError extends StowageError {
  readonly code = 'Forbidden';
  readonly retryable = false;
}
export class TimeoutError extends StowageError {
  readonly code = 'Timeout';
  readonly retryable = true;
}
export class UnavailableError extends StowageError {
  readonly code = 'Unavailable';
  readonly retryable = true;
}
export class InternalError extends StowageError {
  readonly code = 'Internal';
  readonly retryable = true;
}

/** Kubernetes StatusCause: `type` is a CauseType such as FieldValueRequired. */
export interface FieldCause {
  readonly type: string;
  readonly message: string;
  readonly field: string;
}

/** Whether `e` (anything caught) means "no such object": a NotFoundError, or an error that normalises to one. */
export function isNotFound(e: unknown): boolean {
  return e instanceof NotFoundError || (!(e instanceof StowageError) && toStowageError(e) instanceof NotFoundError);
}

/**
 * For `.catch(ignoreNotFound)`: undefined when the object was not there (already deleted is as
 * good as deleted), every other error rethrown.
 */
export function ignoreNotFound(e: unknown): undefined {
  if (isNotFound(e)) return undefined;
  throw e;
}

/** Anything unknown becomes Internal, with the original kept as `cause`. */
export function toStowageError(e: unknown): StowageError {
  if (e instanceof StowageError) return e;
  const message = e instanceof Error ? e.message : String(e);
  return new InternalError(message, { cause: e });
}

export function assertNever(x: never): never {
  throw new Error(`unhandled case: ${String(x)}`);
}
