import { describe, it, expect } from 'vitest';
import { status } from '@grpc/grpc-js';
import { CsiError, toCsiError, grpcCodeName } from './errors.js';
import { StowageError } from '../util/errors.js';

describe('gRPC status → CsiError', () => {
  it.each([
    { code: status.UNAVAILABLE, retryable: true, uncertain: true, stowage: 'Unavailable' },
    { code: status.DEADLINE_EXCEEDED, retryable: true, uncertain: true, stowage: 'Timeout' },
    { code: status.ABORTED, retryable: true, uncertain: true, stowage: 'Conflict' },
    { code: status.CANCELLED, retryable: true, uncertain: true, stowage: 'Unavailable' },
    { code: status.RESOURCE_EXHAUSTED, retryable: false, uncertain: true, stowage: 'Unavailable' },
    { code: status.INVALID_ARGUMENT, retryable: false, uncertain: false, stowage: 'BadRequest' },
    { code: status.NOT_FOUND, retryable: false, uncertain: false, stowage: 'NotFound' },
    { code: status.ALREADY_EXISTS, retryable: false, uncertain: false, stowage: 'AlreadyExists' },
    { code: status.FAILED_PRECONDITION, retryable: false, uncertain: false, stowage: 'BadRequest' },
    { code: status.OUT_OF_RANGE, retryable: false, uncertain: false, stowage: 'Invalid' },
    { code: status.UNIMPLEMENTED, retryable: false, uncertain: false, stowage: 'MethodNotAllowed' },
    { code: status.UNAUTHENTICATED, retryable: false, uncertain: false, stowage: 'Unauthorized' },
  ])('$code → retryable=$retryable uncertain=$uncertain $stowage', ({ code, retryable, uncertain, stowage }) => {
    const e = toCsiError('/csi.v1.Node/NodePublishVolume', { code, details: 'boom', message: 'x' });
    expect(e).toBeInstanceOf(CsiError);
    expect(e).toBeInstanceOf(StowageError);
    expect(e.grpcCode).toBe(code);
    expect(e.retryable).toBe(retryable);
    expect(e.uncertain).toBe(uncertain);
    expect(e.code).toBe(stowage);
    expect(e.message).toBe(`/csi.v1.Node/NodePublishVolume: ${grpcCodeName(code)}: boom`);
  });

  it('turns a non-status error into UNKNOWN and keeps the cause', () => {
    const cause = new TypeError('bad');
    const e = toCsiError('m', cause);
    expect(e.grpcCodeName).toBe('UNKNOWN');
    expect(e.details).toBe('bad');
    expect(e.cause).toBe(cause);
  });

  it('returns a CsiError unchanged', () => {
    const e = new CsiError('m', status.NOT_FOUND, 'x');
    expect(toCsiError('other', e)).toBe(e);
  });

  it('names unknown codes', () => {
    expect(grpcCodeName(99)).toBe('CODE_99');
    expect(grpcCodeName(5)).toBe('NOT_FOUND');
  });
});
