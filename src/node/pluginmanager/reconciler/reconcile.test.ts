import { describe, it, expect } from 'vitest';
import { socketPathOf, type DesiredPlugin, type RegisteredPlugin } from '../cache/types.js';
import { reconcile, type PluginOperation } from './reconcile.js';

const want = (name: string, timestamp: number): DesiredPlugin => ({
  socketPath: socketPathOf(`/reg/${name}-reg.sock`),
  timestamp,
});
const have = (name: string, timestamp: number): RegisteredPlugin => ({
  ...want(name, timestamp),
  type: 'CSIPlugin',
  name,
  endpoint: `/plugins/${name}/csi.sock`,
});
const reg = (p: DesiredPlugin): PluginOperation => ({ kind: 'register', plugin: p });
const unreg = (p: RegisteredPlugin): PluginOperation => ({ kind: 'unregister', plugin: p });

describe('reconcile', () => {
  it.each([
    { name: 'nothing → nothing', dsw: [], asw: [], want: [] },
    { name: 'new socket → register', dsw: [want('a', 1)], asw: [], want: [reg(want('a', 1))] },
    { name: 'registered and unchanged → nothing', dsw: [want('a', 1)], asw: [have('a', 1)], want: [] },
    { name: 'socket gone → unregister', dsw: [], asw: [have('a', 1)], want: [unreg(have('a', 1))] },
    {
      name: 'socket re-created → unregister then register',
      dsw: [want('a', 2)],
      asw: [have('a', 1)],
      want: [unreg(have('a', 1)), reg(want('a', 2))],
    },
    {
      name: 'every unregister precedes every register',
      dsw: [want('new', 5), want('b', 3)],
      asw: [have('b', 1), have('gone', 1)],
      want: [unreg(have('b', 1)), unreg(have('gone', 1)), reg(want('new', 5)), reg(want('b', 3))],
    },
  ])('$name', ({ dsw, asw, want: expected }) => {
    expect(reconcile(dsw, asw)).toEqual(expected);
  });
});
