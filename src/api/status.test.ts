import { describe, expect, it } from 'vitest';
import { ExpiredError, InvalidError, NotFoundError, UnsupportedMediaTypeError } from '../util/errors.js';
import {
  alreadyExists,
  ApiAlreadyExistsError,
  ApiBadRequestError,
  ApiConflictError,
  ApiExpiredError,
  ApiForbiddenError,
  ApiInvalidError,
  ApiMethodNotAllowedError,
  ApiNotAcceptableError,
  ApiNotFoundError,
  ApiRequestEntityTooLargeError,
  ApiTimeoutError,
  ApiTooManyRequestsError,
  ApiUnauthorizedError,
  ApiUnsupportedMediaTypeError,
  badRequest,
  conflict,
  expired,
  forbidden,
  HttpError,
  invalid,
  methodNotAllowed,
  notFound,
  toStatus,
} from './status.js';

const pv = { group: '', resource: 'persistentvolumes', name: 'a' };

describe('HttpError subclasses', () => {
  it.each([
    { e: new ApiBadRequestError('m'), code: 'BadRequest', http: 400, reason: 'BadRequest' },
    { e: new ApiUnauthorizedError('m'), code: 'Unauthorized', http: 401, reason: 'Unauthorized' },
    { e: new ApiForbiddenError('m'), code: 'Forbidden', http: 403, reason: 'Forbidden' },
    { e: new ApiNotFoundError('m'), code: 'NotFound', http: 404, reason: 'NotFound' },
    { e: new ApiMethodNotAllowedError('m'), code: 'MethodNotAllowed', http: 405, reason: 'MethodNotAllowed' },
    { e: new ApiNotAcceptableError('m'), code: 'NotAcceptable', http: 406, reason: 'NotAcceptable' },
    { e: new ApiAlreadyExistsError('m'), code: 'AlreadyExists', http: 409, reason: 'AlreadyExists' },
    { e: new ApiConflictError('m'), code: 'Conflict', http: 409, reason: 'Conflict' },
    { e: new ApiExpiredError('m'), code: 'Expired', http: 410, reason: 'Expired' },
    {
      e: new ApiRequestEntityTooLargeError('m'),
      code: 'RequestEntityTooLarge',
      http: 413,
      reason: 'RequestEntityTooLarge',
    },
    {
      e: new ApiUnsupportedMediaTypeError('m'),
      code: 'UnsupportedMediaType',
      http: 415,
      reason: 'UnsupportedMediaType',
    },
    { e: new ApiInvalidError('m'), code: 'Invalid', http: 422, reason: 'Invalid' },
    { e: new ApiTooManyRequestsError('m'), code: 'TooManyRequests', http: 429, reason: 'TooManyRequests' },
    { e: new ApiTimeoutError('m'), code: 'Timeout', http: 504, reason: 'Timeout' },
  ])('$code → $http $reason', ({ e, code, http, reason }) => {
    expect(e).toBeInstanceOf(HttpError);
    expect(e.code).toBe(code);
    expect(e.httpStatus).toBe(http);
    expect(e.reason).toBe(reason);
    expect(e.name).toBe(e.constructor.name);
    expect(toStatus(e)).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'm',
      reason,
      code: http,
    });
  });

  it('the constructors make the subclass of their reason', () => {
    expect(notFound(pv)).toBeInstanceOf(ApiNotFoundError);
    expect(alreadyExists(pv)).toBeInstanceOf(ApiAlreadyExistsError);
    expect(conflict(pv)).toBeInstanceOf(ApiConflictError);
    expect(invalid('PersistentVolume', '', 'a', [], 'm')).toBeInstanceOf(ApiInvalidError);
    expect(badRequest('m')).toBeInstanceOf(ApiBadRequestError);
    expect(forbidden('m')).toBeInstanceOf(ApiForbiddenError);
    expect(methodNotAllowed()).toBeInstanceOf(ApiMethodNotAllowedError);
    expect(expired('m')).toBeInstanceOf(ApiExpiredError);
    // Only a lost race is worth retrying as is.
    expect(conflict(pv).retryable).toBe(true);
    expect(notFound(pv).retryable).toBe(false);
  });
});

describe('toStatus', () => {
  it('writes Status bodies as kube-apiserver does', () => {
    expect(toStatus(notFound(pv))).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'persistentvolumes "a" not found',
      reason: 'NotFound',
      details: { name: 'a', kind: 'persistentvolumes' },
      code: 404,
    });
    expect(toStatus(conflict({ group: 'storage.k8s.io', resource: 'storageclasses', name: 'x' }))).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message:
        'Operation cannot be fulfilled on storageclasses.storage.k8s.io "x": the object has been modified; please apply your changes to the latest version and try again',
      reason: 'Conflict',
      details: { name: 'x', group: 'storage.k8s.io', kind: 'storageclasses' },
      code: 409,
    });
    // On the wire a cause's type is `reason` (Go's StatusCause.Type has the JSON name "reason").
    const causes = [{ type: 'FieldValueRequired', field: 'spec', message: 'Required value' }];
    const wire = [{ reason: 'FieldValueRequired', message: 'Required value', field: 'spec' }];
    expect(
      toStatus(invalid('PersistentVolume', '', 'a', causes, 'PersistentVolume "a" is invalid: spec: Required value'))
        .details,
    ).toEqual({ name: 'a', kind: 'PersistentVolume', causes: wire });
  });

  it('maps Stowage errors from inner layers by their code', () => {
    expect(toStatus(new NotFoundError('gone'))).toMatchObject({ code: 404, reason: 'NotFound', message: 'gone' });
    expect(toStatus(new ExpiredError('old'))).toMatchObject({ code: 410, reason: 'Expired' });
    expect(toStatus(new UnsupportedMediaTypeError('x'))).toMatchObject({ code: 415, reason: 'UnsupportedMediaType' });
    const causes = [{ type: 'FieldValueInvalid', field: 'patch', message: 'bad' }];
    expect(toStatus(new InvalidError('bad', causes))).toMatchObject({
      code: 422,
      reason: 'Invalid',
      details: { causes: [{ reason: 'FieldValueInvalid', field: 'patch', message: 'bad' }] },
    });
  });

  it('turns anything else into a 500 InternalError', () => {
    expect(toStatus(new Error('boom'))).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'Internal error occurred: boom',
      reason: 'InternalError',
      code: 500,
    });
  });
});
