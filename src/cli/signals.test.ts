import { describe, expect, it } from 'vitest';
import { untilAborted } from '../util/abort.js';
import { runUntilSignalled, ShutdownRequested } from './signals.js';

describe('runUntilSignalled', () => {
  it.each(['SIGINT', 'SIGTERM'] as const)('%s aborts the run, and its handlers are gone afterwards', async (sig) => {
    const before = { int: process.listenerCount('SIGINT'), term: process.listenerCount('SIGTERM') };
    const reason = runUntilSignalled(async (signal) => {
      expect(process.listenerCount(sig)).toBe((sig === 'SIGINT' ? before.int : before.term) + 1);
      process.emit(sig, sig);
      await untilAborted(signal);
      return signal.reason as unknown;
    });
    const r = await reason;
    expect(r).toBeInstanceOf(ShutdownRequested);
    expect(r).toMatchObject({ signal: sig, message: `received ${sig}` });
    expect({ int: process.listenerCount('SIGINT'), term: process.listenerCount('SIGTERM') }).toEqual(before);
  });

  it('removes its handlers when the run fails too', async () => {
    const before = process.listenerCount('SIGTERM');
    await expect(runUntilSignalled(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(process.listenerCount('SIGTERM')).toBe(before);
  });
});
