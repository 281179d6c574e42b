import { describe, expect, it } from 'vitest';
import { KeyedMutex } from './mutex.js';

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('KeyedMutex', () => {
  it('serializes one key in arrival order and lets other keys run', async () => {
    const m = new KeyedMutex();
    const order: string[] = [];
    const gate = deferred();
    const a = m.run('k', async () => {
      order.push('a-start');
      await gate.promise;
      order.push('a-end');
    });
    const b = m.run('k', async () => {
      order.push('b');
    });
    const other = m.run('other', async () => {
      order.push('other');
    });
    await other;
    expect(order).toEqual(['a-start', 'other']);
    gate.resolve();
    await Promise.all([a, b]);
    expect(order).toEqual(['a-start', 'other', 'a-end', 'b']);
    expect(m.size).toBe(0);
  });

  it('releases the key when the holder throws', async () => {
    const m = new KeyedMutex();
    await expect(m.run('k', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await m.run('k', async () => 7)).toBe(7);
  });
});
