import { describe, expect, it, vi } from 'vitest';
import { runtimeDownReason, watchRuntimeHealth } from './health.js';
import { realClock } from '../../util/backoff.js';

const status = (ready: boolean | undefined) => ({
  status: {
    conditions:
      ready === undefined
        ? []
        : [
            {
              type: 'RuntimeReady',
              status: ready,
              reason: ready ? '' : 'ContainerdNotReady',
              message: ready ? '' : 'shutting down',
            },
            { type: 'NetworkReady', status: false, reason: 'NoCNI', message: '' },
          ],
  },
  info: {},
});

describe('runtime health', () => {
  it.each([
    { name: 'ready (NetworkReady false does not matter: host network)', r: { ok: status(true) }, want: undefined },
    {
      name: 'not ready',
      r: { ok: status(false) },
      want: 'RuntimeReady=false reason:ContainerdNotReady message:shutting down',
    },
    { name: 'no RuntimeReady', r: { ok: status(undefined) }, want: 'the runtime did not report RuntimeReady' },
    { name: 'call failed', r: { error: new Error('connect ECONNREFUSED') }, want: 'connect ECONNREFUSED' },
  ])('$name', ({ r, want }) => {
    expect(runtimeDownReason(r)).toBe(want);
  });

  it('reports each change, down then up again, and nothing while it stays the same', async () => {
    const answers = [status(true), new Error('gone'), new Error('gone'), status(true), status(true)];
    const changes: Array<string | undefined> = [];
    const stop = new AbortController();
    const cri = {
      status: vi.fn(async () => {
        const a = answers.shift();
        if (!a) stop.abort();
        if (a instanceof Error) throw a;
        return a ?? status(true);
      }),
    };
    await watchRuntimeHealth({
      cri,
      clock: realClock,
      signal: stop.signal,
      periodMs: 1,
      onChange: (d) => changes.push(d),
    });
    expect(changes).toEqual(['gone', undefined]);
  });
});
