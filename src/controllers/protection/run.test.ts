import { describe, expect, it } from 'vitest';
import { ConflictError, NotFoundError } from '../../util/errors.js';
import { updateUnlessGone } from './run.js';

describe('a finalizer update for an object already gone', () => {
  it('is done, not an error (no "[protection] … not found" warning and no requeue)', async () => {
    await expect(
      updateUnlessGone(() => Promise.reject(new NotFoundError('persistentvolumeclaims "c" not found'))),
    ).resolves.toBe(false);
  });
  it('other failures still fail (a conflict requeues)', async () => {
    await expect(updateUnlessGone(() => Promise.reject(new ConflictError('modified')))).rejects.toBeInstanceOf(
      ConflictError,
    );
    await expect(updateUnlessGone(() => Promise.resolve({}))).resolves.toBe(true);
  });
});
