import { InvalidError, StowageError, toStowageError, type ErrorCode, type FieldCause } from '../util/errors.js';

/** A meta/v1 StatusCause on the wire: Go's `Type` field is serialized as `reason`. */
export interface StatusCause {
  reason: string;
  message: string;
  field: string;
}

/** A meta/v1 Status as kube-apiserver writes it. */
export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Success' | 'Failure';
  message?: string;
  reason?: string;
  details?: {
    name?: string;
    group?: string;
    kind?: string;
    uid?: string;
    causes?: StatusCause[];
    retryAfterSeconds?: number;
  };
  code: number;
}

/** Status details as errors carry them (causes in Stowage's FieldCause form). */
export interface ErrorDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: FieldCause[];
  retryAfterSeconds?: number;
}

function wireCauses(causes: readonly FieldCause[]): StatusCause[] {
  return causes.map((c) => ({ reason: c.type, message: c.message, field: c.field }));
}

/** The HTTP code and Kubernetes StatusReason of each error code (apimachinery's errors package). */
export const HTTP_STATUS_OF: Readonly<Record<ErrorCode, { readonly httpStatus: number; readonly reason: string }>> = {
  BadRequest: { httpStatus: 400, reason: 'BadRequest' },
  Unauthorized: { httpStatus: 401, reason: 'Unauthorized' },
  Forbidden: { httpStatus: 403, reason: 'Forbidden' },
  NotFound: { httpStatus: 404, reason: 'NotFound' },
  MethodNotAllowed: { httpStatus: 405, reason: 'MethodNotAllowed' },
  NotAcceptable: { httpStatus: 406, reason: 'NotAcceptable' },
  AlreadyExists: { httpStatus: 409, reason: 'AlreadyExists' },
  Conflict: { httpStatus: 409, reason: 'Conflict' },
  Expired: { httpStatus: 410, reason: 'Expired' },
  Gone: { httpStatus: 410, reason: 'Gone' },
  RequestEntityTooLarge: { httpStatus: 413, reason: 'RequestEntityTooLarge' },
  UnsupportedMediaType: { httpStatus: 415, reason: 'UnsupportedMediaType' },
  Invalid: { httpStatus: 422, reason: 'Invalid' },
  TooManyRequests: { httpStatus: 429, reason: 'TooManyRequests' },
  Internal: { httpStatus: 500, reason: 'InternalError' },
  Unavailable: { httpStatus: 503, reason: 'ServiceUnavailable' },
  Timeout: { httpStatus: 504, reason: 'Timeout' },
};

/**
 * An error the API server answers with a Failure Status: its HTTP code and reason follow from
 * `code` (HTTP_STATUS_OF); `details` name the object. One subclass per reason, checked with instanceof.
 */
export abstract class HttpError extends StowageError {
  constructor(
    message: string,
    readonly details?: ErrorDetails,
  ) {
    super(message);
  }
  get httpStatus(): number {
    return HTTP_STATUS_OF[this.code].httpStatus;
  }
  get reason(): string {
    return HTTP_STATUS_OF[this.code].reason;
  }
}

export class ApiBadRequestError extends HttpError {
  readonly code = 'BadRequest';
  readonly retryable = false;
}
export class ApiUnauthorizedError extends HttpError {
  readonly code = 'Unauthorized';
  readonly retryable = false;
}
export class ApiForbiddenError extends HttpError {
  readonly code = 'Forbidden';
  readonly retryable = false;
}
export class ApiNotFoundError extends HttpError {
  readonly code = 'NotFound';
  readonly retryable = false;
}
export class ApiMethodNotAllowedError extends HttpError {
  readonly code = 'MethodNotAllowed';
  readonly retryable = false;
}
export class ApiNotAcceptableError extends HttpError {
  readonly code = 'NotAcceptable';
  readonly retryable = false;
}
export class ApiAlreadyExistsError extends HttpError {
  readonly code = 'AlreadyExists';
  readonly retryable = false;
}
/** Optimistic concurrency lost or a precondition failed (409 Conflict). */
export class ApiConflictError extends HttpError {
  readonly code = 'Conflict';
  readonly retryable = true;
}
/** 410 Gone with reason Expired: a continue token or resourceVersion older than the history kept. */
export class ApiExpiredError extends HttpError {
  readonly code = 'Expired';
  readonly retryable = false;
}
export class ApiRequestEntityTooLargeError extends HttpError {
  readonly code = 'RequestEntityTooLarge';
  readonly retryable = false;
}
export class ApiUnsupportedMediaTypeError extends HttpError {
  readonly code = 'UnsupportedMediaType';
  readonly retryable = false;
}
export class ApiInvalidError extends HttpError {
  readonly code = 'Invalid';
  readonly retryable = false;
}
export class ApiTooManyRequestsError extends HttpError {
  readonly code = 'TooManyRequests';
  readonly retryable = true;
}
export class ApiTimeoutError extends HttpError {
  readonly code = 'Timeout';
  readonly retryable = true;
}

/** Who the error is about, for Status.details and kube-style messages. */
export interface ErrorSubject {
  readonly group: string;
  /** plural resource name, e.g. "persistentvolumes" (kube puts the resource in details.kind) */
  readonly resource: string;
  readonly name?: string;
}

function qualified(s: ErrorSubject): string {
  return s.group ? `${s.resource}.${s.group}` : s.resource;
}

function subjectDetails(s: ErrorSubject): ErrorDetails {
  return { name: s.name, group: s.group || undefined, kind: s.resource };
}

export function notFound(s: ErrorSubject): ApiNotFoundError {
  return new ApiNotFoundError(`${qualified(s)} "${s.name ?? ''}" not found`, subjectDetails(s));
}

/** A path the server does not serve (no resource, unknown group or version). */
export function pathNotFound(): ApiNotFoundError {
  // kube-apiserver's answer carries an empty `details` object; kubectl reads `details.name` on this
  // 404 (`kubectl debug` without pods/ephemeralcontainers) and crashes when it is missing.
  return new ApiNotFoundError('the server could not find the requested resource', {});
}

export function alreadyExists(s: ErrorSubject): ApiAlreadyExistsError {
  return new ApiAlreadyExistsError(`${qualified(s)} "${s.name ?? ''}" already exists`, subjectDetails(s));
}

export function conflict(
  s: ErrorSubject,
  why = 'the object has been modified; please apply your changes to the latest version and try again',
): ApiConflictError {
  return new ApiConflictError(
    `Operation cannot be fulfilled on ${qualified(s)} "${s.name ?? ''}": ${why}`,
    subjectDetails(s),
  );
}

export function invalid(
  kind: string,
  group: string,
  name: string,
  causes: readonly FieldCause[],
  message: string,
): ApiInvalidError {
  return new ApiInvalidError(message, { name, group: group || undefined, kind, causes: [...causes] });
}

export function badRequest(message: string): ApiBadRequestError {
  return new ApiBadRequestError(message);
}

export function forbidden(message: string, s?: ErrorSubject): ApiForbiddenError {
  return new ApiForbiddenError(message, s ? subjectDetails(s) : undefined);
}

export function methodNotAllowed(
  message = 'the server does not allow this method on the requested resource',
): ApiMethodNotAllowedError {
  return new ApiMethodNotAllowedError(message);
}

export function expired(message: string): ApiExpiredError {
  return new ApiExpiredError(message);
}

/**
 * A failure kube-apiserver answers without a reason: a plain error that reached its handler
 * (server-side apply's "failed to create typed patch object"). 500, the message as it is.
 */
export class ApiUnknownReasonError extends HttpError {
  readonly code = 'Internal';
  readonly retryable = false;
}

/** Turns any thrown value into a Status and its HTTP code. Unknown errors become 500 InternalError. */
export function toStatus(e: unknown): Status {
  const base = { kind: 'Status' as const, apiVersion: 'v1' as const, metadata: {}, status: 'Failure' as const };
  if (e instanceof ApiUnknownReasonError) return { ...base, message: e.message, code: 500 };
  const err = toStowageError(e);
  const { httpStatus, reason } = HTTP_STATUS_OF[err.code];
  const message = err.code === 'Internal' ? `Internal error occurred: ${err.message}` : err.message;
  const s: Status = { ...base, message, reason, code: httpStatus };
  if (err instanceof HttpError && err.details) {
    const { causes, ...rest } = err.details;
    s.details = stripUndefined({ ...rest, causes: causes && wireCauses(causes) });
  } else if (err instanceof InvalidError) s.details = { causes: wireCauses(err.causes) };
  return s;
}

export function successStatus(details?: Status['details']): Status {
  const s: Status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 200 };
  if (details) s.details = stripUndefined(details);
  return s;
}

function stripUndefined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
