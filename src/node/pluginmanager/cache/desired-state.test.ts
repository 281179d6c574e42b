import { describe, it, expect } from 'vitest';
import { FakeClock } from '../../../client/fake-clock.test-kit.js';
import { newDesiredStateOfWorld } from './desired-state.js';
import { socketPathOf } from './types.js';

const A = socketPathOf('/reg/a-reg.sock');
const B = socketPathOf('/reg/sub/b-reg.sock');

describe('desired state of world', () => {
  it('adds, lists and removes sockets', () => {
    const dsw = newDesiredStateOfWorld(new FakeClock(1000));
    dsw.addOrUpdatePlugin(A);
    dsw.addOrUpdatePlugin(B);
    expect(dsw.isAdded(A)).toBe(true);
    expect(
      dsw
        .pluginsToRegister()
        .map((p) => p.socketPath)
        .sort(),
    ).toEqual([A, B]);
    dsw.removePlugin(A);
    expect(dsw.isAdded(A)).toBe(false);
    expect(dsw.pluginsToRegister().map((p) => p.socketPath)).toEqual([B]);
  });

  it('removing an absent socket is a no-op', () => {
    const dsw = newDesiredStateOfWorld(new FakeClock(1000));
    dsw.removePlugin(A);
    expect(dsw.pluginsToRegister()).toEqual([]);
  });

  it('re-adding refreshes the timestamp, strictly increasing within one clock tick', async () => {
    const clock = new FakeClock(1000);
    const dsw = newDesiredStateOfWorld(clock);
    dsw.addOrUpdatePlugin(A);
    const t1 = dsw.pluginsToRegister()[0]?.timestamp;
    dsw.addOrUpdatePlugin(A);
    const t2 = dsw.pluginsToRegister()[0]?.timestamp;
    expect(t1).toBe(1000);
    expect(t2).toBeGreaterThan(t1 ?? Infinity);
    await clock.advance(5000);
    dsw.addOrUpdatePlugin(A);
    expect(dsw.pluginsToRegister()[0]?.timestamp).toBe(6000);
  });

  it('returns copies callers cannot use to mutate the cache', () => {
    const dsw = newDesiredStateOfWorld(new FakeClock(1000));
    dsw.addOrUpdatePlugin(A);
    const list = dsw.pluginsToRegister();
    list.pop();
    expect(dsw.pluginsToRegister()).toHaveLength(1);
    expect(() => Object.assign(dsw.pluginsToRegister()[0] ?? {}, { timestamp: 1 })).toThrow();
  });
});
