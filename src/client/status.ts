import type { Status, StatusCause } from 'kubernetes-types/meta/v1.js';
import {
  AlreadyExistsError,
  BadRequestError,
  ConflictError,
  ExpiredError,
  ForbiddenError,
  InternalError,
  InvalidError,
  NotFoundError,
  TimeoutError,
  UnauthorizedError,
  UnavailableError,
  type FieldCause,
  type StowageError,
} from '../util/errors.js';

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Reads a metav1.Status out of an unknown JSON value; undefined when it is not one. */
export function parseStatus(v: unknown): Status | undefined {
  if (!isRecord(v) || v.kind !== 'Status') return undefined;
  const str = (x: unknown): string | undefined => (typeof x === 'string' ? x : undefined);
  const status: Status = { kind: 'Status', apiVersion: str(v.apiVersion) ?? 'v1' };
  if (typeof v.code === 'number') status.code = v.code;
  if (str(v.status) !== undefined) status.status = str(v.status);
  if (str(v.reason) !== undefined) status.reason = str(v.reason);
  if (str(v.message) !== undefined) status.message = str(v.message);
  if (isRecord(v.details)) {
    const d = v.details;
    const causes: StatusCause[] = Array.isArray(d.causes)
      ? d.causes.filter(isRecord).map((c) => ({ reason: str(c.reason), message: str(c.message), field: str(c.field) }))
      : [];
    status.details = { name: str(d.name), kind: str(d.kind), group: str(d.group), uid: str(d.uid), causes };
    if (typeof d.retryAfterSeconds === 'number') status.details.retryAfterSeconds = d.retryAfterSeconds;
  }
  return status;
}

/**
 * Turns an HTTP error answer into Stowage's typed error, the way apimachinery's `errors.Is*`
 * helpers classify it: by Status reason first, then by HTTP code. The Status is kept as `cause`.
 */
export function errorFromStatus(httpCode: number, body: unknown, fallbackMessage = ''): StowageError {
  const status = parseStatus(body);
  const code = status?.code ?? httpCode;
  const message = status?.message || fallbackMessage || `HTTP ${httpCode}`;
  const opts = { cause: status ?? body };
  switch (status?.reason) {
    case 'NotFound':
      return new NotFoundError(message, opts);
    case 'AlreadyExists':
      return new AlreadyExistsError(message, opts);
    case 'Conflict':
      return new ConflictError(message, opts);
    case 'Invalid':
      return new InvalidError(message, causesOf(status), opts);
    case 'Expired':
    case 'Gone':
    case 'ResourceExpired':
      return new ExpiredError(message, opts);
    case 'Unauthorized':
      return new UnauthorizedError(message, opts);
    case 'Forbidden':
      return new ForbiddenError(message, opts);
    case 'Timeout':
    case 'ServerTimeout':
      return new TimeoutError(message, opts);
    case 'TooManyRequests':
    case 'ServiceUnavailable':
      return new UnavailableError(message, opts);
    default:
      break;
  }
  if (code === 404) return new NotFoundError(message, opts);
  if (code === 409) return new ConflictError(message, opts);
  if (code === 410) return new ExpiredError(message, opts);
  if (code === 422) return new InvalidError(message, causesOf(status), opts);
  if (code === 401) return new UnauthorizedError(message, opts);
  if (code === 403) return new ForbiddenError(message, opts);
  if (code === 504) return new TimeoutError(message, opts);
  if (code === 429 || code >= 500) return new UnavailableError(message, opts);
  if (code >= 400 && code < 500) return new BadRequestError(message, opts);
  return new InternalError(message, opts);
}

function causesOf(status: Status | undefined): FieldCause[] {
  return (status?.details?.causes ?? []).map((c) => ({
    type: c.reason ?? '',
    message: c.message ?? '',
    field: c.field ?? '',
  }));
}

/** Connection-level failures (refused, reset, TLS) are retryable: the server may come back. */
export function errorFromTransport(e: unknown): StowageError {
  if (e instanceof Error && 'code' in e && typeof e.code === 'string') {
    return new UnavailableError(`${e.code}: ${e.message}`, { cause: e });
  }
  return new UnavailableError(e instanceof Error ? e.message : String(e), { cause: e });
}
