import { describe, expect, it } from 'vitest';
import { ConflictError, ignoreNotFound, isNotFound, NotFoundError } from './errors.js';

describe('isNotFound / ignoreNotFound', () => {
  it('tell "no such object" from every other failure', async () => {
    expect(isNotFound(new NotFoundError('gone'))).toBe(true);
    expect(isNotFound(new ConflictError('stale'))).toBe(false);
    expect(isNotFound(new Error('boom'))).toBe(false);
    expect(await Promise.reject(new NotFoundError('gone')).catch(ignoreNotFound)).toBeUndefined();
    await expect(Promise.reject(new ConflictError('stale')).catch(ignoreNotFound)).rejects.toThrow('stale');
  });
});
