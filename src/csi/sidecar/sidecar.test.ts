import { status } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { InvalidError, NotFoundError, toStowageError } from '../../util/errors.js';
import { CsiError } from '../client.js';
import { retryingCsiFailures } from './sidecar.js';

const failingWith = (e: unknown) => retryingCsiFailures<string>(() => Promise.reject(e));
const retryable = async (e: unknown): Promise<boolean> =>
  failingWith(e)('k', new AbortController().signal).then(
    () => {
      throw new Error('expected a failure');
    },
    (err: unknown) => toStowageError(err).retryable,
  );

describe('sidecar loops: which failures are retried', () => {
  it.each([
    {
      name: 'a CSI failure the spec calls final (FAILED_PRECONDITION)',
      e: new CsiError('DeleteVolume', status.FAILED_PRECONDITION, 'still published'),
      want: true,
    },
    {
      name: 'a CSI failure the spec calls final (RESOURCE_EXHAUSTED)',
      e: new CsiError('ControllerExpandVolume', status.RESOURCE_EXHAUSTED, 'no space'),
      want: true,
    },
    { name: 'a transient CSI failure', e: new CsiError('CreateVolume', status.UNAVAILABLE, 'restarting'), want: true },
    {
      name: "the sidecar's own decision that only the user can fix it",
      e: new InvalidError('bad parameter'),
      want: false,
    },
    { name: 'a watched object that is missing', e: new NotFoundError('class gold not found'), want: false },
    { name: 'anything unclassified', e: new Error('boom'), want: true },
  ])('$name → retried: $want', async ({ e, want }) => {
    expect(await retryable(e)).toBe(want);
  });

  it('keeps the CSI error as the cause', async () => {
    const e = new CsiError('DeleteVolume', status.FAILED_PRECONDITION, 'still published');
    await expect(failingWith(e)('k', new AbortController().signal)).rejects.toMatchObject({
      cause: e,
      message: e.message,
    });
  });
});
