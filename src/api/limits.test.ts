import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { isLongRunning, newInFlightLimiter, parseGoDuration, watchTimeoutMs } from './limits.js';

describe('parseGoDuration (Go time.ParseDuration)', () => {
  it.each([
    ['0', 0],
    ['30s', 30_000],
    ['1m30s', 90_000],
    ['1.5s', 1_500],
    ['250ms', 250],
    ['2h', 7_200_000],
    ['-1s', -1_000],
  ])('%s → %d ms', (s, ms) => expect(parseGoDuration(s)).toBe(ms));

  it.each([
    ['soon', 'time: invalid duration "soon"'],
    ['5', 'time: missing unit in duration "5"'],
    ['5y', 'time: unknown unit "y" in duration "5y"'],
    ['', 'time: invalid duration ""'],
  ])("%s is refused with Go's message", (s, msg) => expect(() => parseGoDuration(s)).toThrow(msg));
});

describe('isLongRunning (kube BasicLongRunningRequestCheck)', () => {
  it.each([
    ['GET', '/api/v1/pods', 'watch=true', true],
    ['GET', '/api/v1/pods', 'watch=1', true],
    ['GET', '/api/v1/watch/namespaces/default/pods', '', true],
    ['GET', '/api/v1/namespaces/default/pods/p/log', '', true],
    ['POST', '/api/v1/namespaces/default/pods/p/exec', '', true],
    ['GET', '/api/v1/nodes/n/proxy', '', true],
    ['GET', '/api/v1/pods', '', false],
    ['POST', '/api/v1/namespaces/default/pods/p/binding', '', false],
    ['PUT', '/api/v1/namespaces/default/pods/p/status', '', false],
    ['POST', '/api/v1/pods', 'watch=true', false],
  ])('%s %s?%s → %s', (method, path, q, want) =>
    expect(isLongRunning(method, path, new URLSearchParams(q))).toBe(want),
  );
});

describe('watchTimeoutMs', () => {
  it('takes timeoutSeconds, else timeout=, else nothing', () => {
    expect(watchTimeoutMs(new URLSearchParams('timeoutSeconds=5&timeout=1s'))).toBe(5_000);
    expect(watchTimeoutMs(new URLSearchParams('timeout=1m'))).toBe(60_000);
    expect(watchTimeoutMs(new URLSearchParams('timeoutSeconds=0'))).toBeUndefined();
    expect(watchTimeoutMs(new URLSearchParams(''))).toBeUndefined();
    expect(() => watchTimeoutMs(new URLSearchParams('timeoutSeconds=abc'))).toThrow(
      'strconv.ParseInt: parsing "abc": invalid syntax',
    );
  });
});

/** A request/response pair the limiter can count; `done()` ends the response. */
function exchange(method: string): { req: IncomingMessage; res: ServerResponse & { sent?: number }; done(): void } {
  const req = { method } as IncomingMessage;
  const res = new EventEmitter() as unknown as ServerResponse & { sent?: number };
  Object.assign(res, {
    headersSent: false,
    writeHead(code: number) {
      res.sent = code;
      return res;
    },
    end() {
      return res;
    },
  });
  return { req, res, done: () => res.emit('close') };
}

describe('newInFlightLimiter', () => {
  const q = new URLSearchParams();
  const user = { groups: ['system:authenticated'] };

  it('keeps one budget for mutating and one for read-only requests, and frees slots as responses close', () => {
    const l = newInFlightLimiter({ maxRequestsInFlight: 1, maxMutatingRequestsInFlight: 1, requestTimeoutMs: 0 });
    const get1 = exchange('GET');
    const post1 = exchange('POST');
    expect(l.admit(get1.req, get1.res, '/api/v1/pods', q, user)).toBe(true);
    expect(l.admit(post1.req, post1.res, '/api/v1/pods', q, user)).toBe(true);
    const get2 = exchange('GET');
    const patch = exchange('PATCH');
    expect(l.admit(get2.req, get2.res, '/api/v1/pods', q, user)).toBe(false);
    expect(get2.res.sent).toBe(429);
    expect(l.admit(patch.req, patch.res, '/api/v1/pods/x', q, user)).toBe(false);
    expect(l.inFlight()).toEqual({ readOnly: 1, mutating: 1 });
    get1.done();
    const get3 = exchange('GET');
    expect(l.admit(get3.req, get3.res, '/api/v1/pods', q, user)).toBe(true);
  });

  it('never refuses watches, health checks or system:masters', () => {
    const l = newInFlightLimiter({ maxRequestsInFlight: 1, maxMutatingRequestsInFlight: 1, requestTimeoutMs: 0 });
    const first = exchange('GET');
    l.admit(first.req, first.res, '/api/v1/pods', q, user);
    const watch = exchange('GET');
    expect(l.admit(watch.req, watch.res, '/api/v1/pods', new URLSearchParams('watch=true'), user)).toBe(true);
    const ready = exchange('GET');
    expect(l.admit(ready.req, ready.res, '/readyz', q, undefined)).toBe(true);
    const admin = exchange('GET');
    expect(l.admit(admin.req, admin.res, '/api/v1/pods', q, { groups: ['system:masters'] })).toBe(true);
    expect(l.inFlight()).toEqual({ readOnly: 2, mutating: 0 });
  });
});
