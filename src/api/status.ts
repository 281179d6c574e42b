import {
  AlreadyExistsError,
  BadRequestError,
  ConflictError,
  ExpiredError,
  InvalidError,
  NotFoundError,
  StowageError,
  TimeoutError,
  UnavailableError,
  toStowageError,
  type FieldCause,
} from '../util/errors.js';

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
  details?: { name?: string; group?: string; kind?: string; uid?: string; causes?: StatusCause[]; retryAfterSeconds?: number };
  code: number;
}

/** Details as errors carry them (causes in Stowage's FieldCause form). */
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

/** An error that carries its HTTP status and Kubernetes reason directly (Forbidden, MethodNotAllowed, ...). */
export class HttpError extends StowageError {
  readonly code = 'BadRequest' as const;
  readonly retryable = false;
  constructor(
    readonly httpStatus: number,
    readonly reason: string,
    message: string,
    readonly details?: ErrorDetails,
  ) {
    super(message);
  }
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

export function notFound(s: ErrorSubject): HttpError {
  return new HttpError(404, 'NotFound', `${qualified(s)} "${s.name ?? ''}" not found`, {
    name: s.name,
    group: s.group || undefined,
    kind: s.resource,
  });
}

export function alreadyExists(s: ErrorSubject): HttpError {
  return new HttpError(409, 'AlreadyExists', `${qualified(s)} "${s.name ?? ''}" already exists`, {
    name: s.name,
    group: s.group || undefined,
    kind: s.resource,
  });
}

export function conflict(s: ErrorSubject, why = 'the object has been modified; please apply your changes to the latest version and try again'): HttpError {
  return new HttpError(409, 'Conflict', `Operation cannot be fulfilled on ${qualified(s)} "${s.name ?? ''}": ${why}`, {
    name: s.name,
    group: s.group || undefined,
    kind: s.resource,
  });
}

export function invalid(kind: string, group: string, name: string, causes: readonly FieldCause[], message: string): HttpError {
  return new HttpError(422, 'Invalid', message, { name, group: group || undefined, kind, causes: [...causes] });
}

export function badRequest(message: string): HttpError {
  return new HttpError(400, 'BadRequest', message);
}

export function forbidden(message: string, s?: ErrorSubject): HttpError {
  return new HttpError(403, 'Forbidden', message, s ? { name: s.name, group: s.group || undefined, kind: s.resource } : undefined);
}

export function methodNotAllowed(message = 'the server does not allow this method on the requested resource'): HttpError {
  return new HttpError(405, 'MethodNotAllowed', message);
}

export function expired(message: string): HttpError {
  return new HttpError(410, 'Expired', message);
}

/** Turns any thrown value into a Status and its HTTP code. Unknown errors become 500 InternalError. */
export function toStatus(e: unknown): Status {
  const base = { kind: 'Status' as const, apiVersion: 'v1' as const, metadata: {}, status: 'Failure' as const };
  if (e instanceof HttpError) {
    const s: Status = { ...base, message: e.message, reason: e.reason, code: e.httpStatus };
    if (e.details) {
      const { causes, ...rest } = e.details;
      s.details = stripUndefined({ ...rest, causes: causes && wireCauses(causes) });
    }
    return s;
  }
  const err = toStowageError(e);
  if (err instanceof NotFoundError) return { ...base, message: err.message, reason: 'NotFound', code: 404 };
  if (err instanceof AlreadyExistsError) return { ...base, message: err.message, reason: 'AlreadyExists', code: 409 };
  if (err instanceof ConflictError) return { ...base, message: err.message, reason: 'Conflict', code: 409 };
  if (err instanceof InvalidError) return { ...base, message: err.message, reason: 'Invalid', code: 422, details: { causes: wireCauses(err.causes) } };
  if (err instanceof BadRequestError) return { ...base, message: err.message, reason: 'BadRequest', code: 400 };
  if (err instanceof ExpiredError) return { ...base, message: err.message, reason: 'Expired', code: 410 };
  if (err instanceof TimeoutError) return { ...base, message: err.message, reason: 'Timeout', code: 504 };
  if (err instanceof UnavailableError) return { ...base, message: err.message, reason: 'ServiceUnavailable', code: 503 };
  if (err.code === 'UnsupportedMediaType') return { ...base, message: err.message, reason: 'UnsupportedMediaType', code: 415 };
  if (err.code === 'NotAcceptable') return { ...base, message: err.message, reason: 'NotAcceptable', code: 406 };
  return { ...base, message: `Internal error occurred: ${err.message}`, reason: 'InternalError', code: 500 };
}

export function successStatus(details?: Status['details']): Status {
  const s: Status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 200 };
  if (details) s.details = stripUndefined(details);
  return s;
}

function stripUndefined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
