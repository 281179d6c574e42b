import { describe, it, expect } from 'vitest';
import {
  PLUGIN_EVENT_REASONS as R,
  parseStatusAnnotation,
  transition,
  type PluginStatus,
  type StatusSignal,
} from './status.js';

const NOW = '2026-01-01T00:00:10Z';
const EARLIER = '2026-01-01T00:00:00Z';
const reg = (socket = '/r/a-reg.sock'): PluginStatus => ({ state: 'registered', since: EARLIER, socket });
const failing = (reason = 'x', socket = '/r/a-reg.sock', unreachable = false): PluginStatus => ({
  state: 'failing',
  reason,
  since: EARLIER,
  socket,
  ...(unreachable ? { unreachable } : {}),
});
const unhealthy = (reason = 'dead'): PluginStatus => ({
  state: 'unhealthy',
  reason,
  since: EARLIER,
  socket: '/r/a-reg.sock',
});
const S = '/r/a-reg.sock';

describe('plugin status transitions', () => {
  it.each<{
    name: string;
    prev: PluginStatus | undefined;
    signal: StatusSignal;
    want: { kind: string; state?: string; since?: string; event?: string };
  }>([
    {
      name: 'first registration',
      prev: undefined,
      signal: { kind: 'registered', socket: S, endpoint: '/e' },
      want: { kind: 'set', state: 'registered', since: NOW, event: R.registered },
    },
    {
      name: 'failing → registered',
      prev: failing(),
      signal: { kind: 'registered', socket: S, endpoint: '/e' },
      want: { kind: 'set', state: 'registered', since: NOW, event: R.registered },
    },
    {
      name: 'registered again, same socket',
      prev: reg(),
      signal: { kind: 'registered', socket: S, endpoint: '/e' },
      want: { kind: 'unchanged' },
    },
    {
      name: 'a failure',
      prev: undefined,
      signal: { kind: 'failed', socket: S, reason: 'no', unreachable: false },
      want: { kind: 'set', state: 'failing', since: NOW, event: R.failing },
    },
    {
      name: 'same failure again',
      prev: failing('no'),
      signal: { kind: 'failed', socket: S, reason: 'no', unreachable: false },
      want: { kind: 'unchanged' },
    },
    {
      name: 'another reason keeps since',
      prev: failing('no'),
      signal: { kind: 'failed', socket: S, reason: 'other', unreachable: false },
      want: { kind: 'set', state: 'failing', since: EARLIER, event: R.failing },
    },
    {
      name: 'a second socket failing does not hide a registration',
      prev: reg(),
      signal: { kind: 'failed', socket: '/r/other.sock', reason: 'dup', unreachable: false },
      want: { kind: 'unchanged' },
    },
    {
      name: 'registered → unhealthy',
      prev: reg(),
      signal: { kind: 'unhealthy', reason: 'dead' },
      want: { kind: 'set', state: 'unhealthy', since: NOW, event: R.unhealthy },
    },
    {
      name: 'still unhealthy',
      prev: unhealthy(),
      signal: { kind: 'unhealthy', reason: 'dead' },
      want: { kind: 'unchanged' },
    },
    {
      name: 'unhealthy → healthy',
      prev: unhealthy(),
      signal: { kind: 'healthy' },
      want: { kind: 'set', state: 'registered', since: NOW, event: R.recovered },
    },
    { name: 'healthy while registered', prev: reg(), signal: { kind: 'healthy' }, want: { kind: 'unchanged' } },
    {
      name: 'health of an unknown driver',
      prev: undefined,
      signal: { kind: 'unhealthy', reason: 'x' },
      want: { kind: 'unchanged' },
    },
    {
      name: 'deregistered',
      prev: reg(),
      signal: { kind: 'deregistered', socket: S },
      want: { kind: 'delete', event: R.deregistered },
    },
    {
      name: 'deregistered from another socket',
      prev: reg(),
      signal: { kind: 'deregistered', socket: '/r/b.sock' },
      want: { kind: 'unchanged' },
    },
    {
      name: 'a refusal is not hidden by the dead socket left behind',
      prev: failing('refused'),
      signal: { kind: 'failed', socket: S, reason: 'not answering', unreachable: true },
      want: { kind: 'unchanged' },
    },
    {
      name: 'unreachable after unreachable with another message',
      prev: failing('a', S, true),
      signal: { kind: 'failed', socket: S, reason: 'b', unreachable: true },
      want: { kind: 'set', state: 'failing', since: EARLIER, event: R.failing },
    },
    {
      name: 'stale socket gone',
      prev: failing('not answering', S, true),
      signal: { kind: 'socketRemoved', socket: S },
      want: { kind: 'delete' },
    },
    {
      name: 'refused socket gone: the refusal stays visible',
      prev: failing('refused'),
      signal: { kind: 'socketRemoved', socket: S },
      want: { kind: 'unchanged' },
    },
    {
      name: 'socket gone while registered (deregistration reports it)',
      prev: reg(),
      signal: { kind: 'socketRemoved', socket: S },
      want: { kind: 'unchanged' },
    },
  ])('$name', ({ prev, signal, want }) => {
    const t = transition('a', prev, signal, NOW);
    expect(t.kind).toBe(want.kind);
    if (t.kind === 'set') {
      expect(t.status.state).toBe(want.state);
      expect(t.status.since).toBe(want.since);
    }
    if (t.kind !== 'unchanged') expect(t.event?.reason).toBe(want.event);
  });

  it('parses its own annotation and drops malformed entries', () => {
    const raw = JSON.stringify({ a: reg(), b: { state: 'weird', since: NOW }, c: 3 });
    expect(parseStatusAnnotation(raw)).toEqual({ a: reg() });
    expect(parseStatusAnnotation('{')).toEqual({});
    expect(parseStatusAnnotation(undefined)).toEqual({});
  });
});
