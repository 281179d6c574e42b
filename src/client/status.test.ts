import { describe, expect, it } from 'vitest';
import {
  AlreadyExistsError,
  BadRequestError,
  ConflictError,
  ExpiredError,
  ForbiddenError,
  InvalidError,
  NotFoundError,
  UnauthorizedError,
  UnavailableError,
} from '../util/errors.js';
import { errorFromStatus } from './status.js';

const status = (code: number, reason: string, extra: Record<string, unknown> = {}): unknown => ({
  kind: 'Status',
  apiVersion: 'v1',
  status: 'Failure',
  code,
  reason,
  message: `msg ${reason}`,
  ...extra,
});

describe('errorFromStatus', () => {
  it.each([
    { name: '404 NotFound', code: 404, body: status(404, 'NotFound'), want: NotFoundError },
    { name: '409 AlreadyExists', code: 409, body: status(409, 'AlreadyExists'), want: AlreadyExistsError },
    { name: '409 Conflict', code: 409, body: status(409, 'Conflict'), want: ConflictError },
    { name: '410 Expired', code: 410, body: status(410, 'Expired'), want: ExpiredError },
    { name: '400 BadRequest', code: 400, body: status(400, 'BadRequest'), want: BadRequestError },
    { name: '401', code: 401, body: status(401, 'Unauthorized'), want: UnauthorizedError },
    { name: '403', code: 403, body: status(403, 'Forbidden'), want: ForbiddenError },
    { name: '500', code: 500, body: status(500, 'InternalError'), want: UnavailableError },
    { name: '503 without a Status body', code: 503, body: 'upstream down', want: UnavailableError },
    { name: '429', code: 429, body: status(429, 'TooManyRequests'), want: UnavailableError },
    { name: '404 without body', code: 404, body: undefined, want: NotFoundError },
  ])('$name', ({ code, body, want }) => {
    const e = errorFromStatus(code, body);
    expect(e).toBeInstanceOf(want);
  });

  it('keeps the message and retryability', () => {
    const e = errorFromStatus(500, status(500, 'InternalError'));
    expect(e.message).toBe('msg InternalError');
    expect(e.retryable).toBe(true);
    expect(errorFromStatus(404, status(404, 'NotFound')).retryable).toBe(false);
  });

  it('422 Invalid carries the causes with their fields', () => {
    const e = errorFromStatus(
      422,
      status(422, 'Invalid', {
        details: {
          name: 'pv1',
          kind: 'PersistentVolume',
          causes: [{ reason: 'FieldValueRequired', message: 'Required value', field: 'spec.capacity' }],
        },
      }),
    );
    expect(e).toBeInstanceOf(InvalidError);
    expect((e as InvalidError).causes).toEqual([
      { type: 'FieldValueRequired', message: 'Required value', field: 'spec.capacity' },
    ]);
  });
});
