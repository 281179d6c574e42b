import { describe, it, expect } from 'vitest';
import { InvalidError } from '../../../util/errors.js';
import { newActualStateOfWorld } from './actual-state.js';
import { socketPathOf, type RegisteredPlugin } from './types.js';

const A = socketPathOf('/reg/a-reg.sock');
const plugin = (over: Partial<RegisteredPlugin> = {}): RegisteredPlugin => ({
  socketPath: A,
  timestamp: 10,
  type: 'CSIPlugin',
  name: 'a.csi',
  endpoint: '/plugins/a/csi.sock',
  ...over,
});

describe('actual state of world', () => {
  it('adds, looks up by socket and timestamp, removes', () => {
    const asw = newActualStateOfWorld();
    asw.addPlugin(plugin());
    expect(asw.get(A)).toEqual(plugin());
    expect(asw.isRegistered(A, 10)).toBe(true);
    expect(asw.isRegistered(A, 11)).toBe(false);
    asw.removePlugin(A);
    expect(asw.get(A)).toBeUndefined();
    expect(asw.registeredPlugins()).toEqual([]);
  });

  it('a later add from the same socket replaces the earlier one', () => {
    const asw = newActualStateOfWorld();
    asw.addPlugin(plugin());
    asw.addPlugin(plugin({ timestamp: 20, endpoint: '/x' }));
    expect(asw.registeredPlugins()).toEqual([plugin({ timestamp: 20, endpoint: '/x' })]);
  });

  it('removeIfTimestamp keeps a newer registration', () => {
    const asw = newActualStateOfWorld();
    asw.addPlugin(plugin({ timestamp: 20 }));
    expect(asw.removeIfTimestamp(A, 10)).toBe(false);
    expect(asw.isRegistered(A, 20)).toBe(true);
    expect(asw.removeIfTimestamp(A, 20)).toBe(true);
    expect(asw.get(A)).toBeUndefined();
  });

  it.each([
    { name: 'empty socket path', p: plugin({ socketPath: socketPathOf('') }) },
    { name: 'empty plugin name', p: plugin({ name: '' }) },
  ])('refuses $name with InvalidError', ({ p }) => {
    expect(() => newActualStateOfWorld().addPlugin(p)).toThrow(InvalidError);
  });

  it('removing an absent socket is a no-op, and getters return copies', () => {
    const asw = newActualStateOfWorld();
    asw.removePlugin(A);
    asw.addPlugin(plugin());
    const got = asw.get(A) as { name: string };
    got.name = 'changed';
    asw.registeredPlugins().pop();
    expect(asw.get(A)?.name).toBe('a.csi');
    expect(asw.registeredPlugins()).toHaveLength(1);
  });
});
