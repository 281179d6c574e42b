import { describe, expect, it } from 'vitest';
import { ConflictError, NotFoundError } from '../util/errors.js';
import { FakeClock } from './fake-clock.test-kit.js';
import { retryOnConflict } from './retry.js';

describe('retryOnConflict', () => {
  it('retries conflicts and returns the first success', async () => {
    let calls = 0;
    const clock = new FakeClock();
    const p = retryOnConflict(
      () => {
        calls++;
        return calls < 3 ? Promise.reject(new ConflictError('stale')) : Promise.resolve('ok');
      },
      { clock },
    );
    await clock.advance(10);
    await clock.advance(10);
    expect(await p).toBe('ok');
    expect(calls).toBe(3);
  });

  it('throws other errors at once and the last conflict after the attempts', async () => {
    let calls = 0;
    await expect(retryOnConflict(() => (calls++, Promise.reject(new NotFoundError('x'))))).rejects.toBeInstanceOf(
      NotFoundError,
    );
    expect(calls).toBe(1);
    calls = 0;
    await expect(
      retryOnConflict(() => (calls++, Promise.reject(new ConflictError('x'))), { attempts: 3, delayMs: 0 }),
    ).rejects.toBeInstanceOf(ConflictError);
    expect(calls).toBe(3);
  });
});
