import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { sendJson } from './http.js';
import { ApiTimeoutError, ApiTooManyRequestsError, badRequest, toStatus } from './status.js';

/**
 * Request limits modelled on kube-apiserver's flags: `--max-requests-inflight`,
 * `--max-mutating-requests-inflight` and `--request-timeout`, with the `timeout=` query parameter.
 */
export interface RequestLimits {
  /** Read-only requests served at once (kube default 400); 0 = unlimited. */
  readonly maxRequestsInFlight: number;
  /** Mutating requests served at once (kube default 200); 0 = unlimited. */
  readonly maxMutatingRequestsInFlight: number;
  /** Deadline of a non-long-running request, and the cap of its `timeout=` (kube default 1m). */
  readonly requestTimeoutMs: number;
}

export const DEFAULT_REQUEST_LIMITS: RequestLimits = {
  maxRequestsInFlight: 400,
  maxMutatingRequestsInFlight: 200,
  requestTimeoutMs: 60_000,
};

/** Who is asking, as far as limits care. */
export interface LimitedUser {
  readonly groups: readonly string[];
}

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
// kube's BasicLongRunningRequestCheck: the watch verb and these subresources run as long as they like.
const LONG_RUNNING_SUBRESOURCES = new Set(['attach', 'exec', 'proxy', 'log', 'portforward']);
const HEALTH_PATHS = new Set(['/healthz', '/livez', '/readyz']);

/** Watches and streaming subresources: exempt from in-flight limits and request deadlines. */
export function isLongRunning(method: string, path: string, query: URLSearchParams): boolean {
  if (method !== 'GET' && method !== 'POST') return false;
  const w = query.get('watch');
  if (method === 'GET' && (w === 'true' || w === '1')) return true;
  const segs = path.split('/').filter(Boolean);
  // /api/v1/watch/…, /apis/<g>/<v>/watch/…
  const gvLen = segs[0] === 'api' ? 2 : segs[0] === 'apis' ? 3 : -1;
  if (gvLen < 0) return false;
  if (method === 'GET' && segs[gvLen] === 'watch') return true;
  // …/<resource>/<name>/<subresource> (namespaced or not): the subresource is the last segment.
  const rest = segs.slice(gvLen);
  const subresource = rest[0] === 'namespaces' && rest.length === 5 ? rest[4] : rest.length === 3 ? rest[2] : undefined;
  return subresource !== undefined && LONG_RUNNING_SUBRESOURCES.has(subresource);
}

/**
 * The in-flight limiter (kube's maxinflight filter): one budget for mutating requests, one for the
 * rest. Long-running requests and health checks are not counted; members of system:masters are
 * never refused ("a super-admin or a loopback connection should always get an answer").
 */
export interface InFlightLimiter {
  /** Counts the request until its response closes; false (and a 429 sent) when over the limit. */
  admit(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    query: URLSearchParams,
    user: LimitedUser | undefined,
  ): boolean;
  /** Requests being served now, by budget. */
  inFlight(): { readOnly: number; mutating: number };
}

export function newInFlightLimiter(l: RequestLimits): InFlightLimiter {
  let readOnly = 0;
  let mutating = 0;
  return {
    inFlight: () => ({ readOnly, mutating }),
    admit(req, res, path, query, user) {
      const method = req.method ?? 'GET';
      if (HEALTH_PATHS.has(path) || isLongRunning(method, path, query)) return true;
      const isMutating = MUTATING.has(method);
      const limit = isMutating ? l.maxMutatingRequestsInFlight : l.maxRequestsInFlight;
      const current = isMutating ? mutating : readOnly;
      if (limit > 0 && current >= limit && !user?.groups.includes('system:masters')) {
        sendTooManyRequests(res);
        return false;
      }
      if (isMutating) mutating++;
      else readOnly++;
      res.once('close', () => {
        if (isMutating) mutating--;
        else readOnly--;
      });
      return true;
    },
  };
}

/** kube answers 429 with `Retry-After: 1`; Stowage also gives the Status clients can parse. */
function sendTooManyRequests(res: ServerResponse): void {
  const s = toStatus(
    new ApiTooManyRequestsError('Too many requests, please try again later.', { retryAfterSeconds: 1 }),
  );
  sendJson(res, s.code, s, { headers: { 'Retry-After': '1' } });
}

const DURATION_UNITS: Readonly<Record<string, number>> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  μs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

/** Go's `time.ParseDuration`, in milliseconds; throws with Go's message. */
export function parseGoDuration(s: string): number {
  const q = JSON.stringify(s);
  let rest = s;
  let sign = 1;
  if (rest[0] === '-' || rest[0] === '+') {
    if (rest[0] === '-') sign = -1;
    rest = rest.slice(1);
  }
  if (rest === '0') return 0;
  if (rest === '') throw new Error(`time: invalid duration ${q}`);
  let total = 0;
  while (rest) {
    const m = /^(\d*)(?:\.(\d*))?/.exec(rest)!;
    if (m[0] === '' || m[0] === '.') throw new Error(`time: invalid duration ${q}`);
    rest = rest.slice(m[0].length);
    const unit = /^[^\d.]*/.exec(rest)![0];
    if (!unit) throw new Error(`time: missing unit in duration ${q}`);
    const factor = DURATION_UNITS[unit];
    if (factor === undefined) throw new Error(`time: unknown unit ${JSON.stringify(unit)} in duration ${q}`);
    rest = rest.slice(unit.length);
    total += Number(`${m[1] || '0'}.${m[2] || '0'}`) * factor;
  }
  return sign * total;
}

/**
 * kube's request deadline: a non-long-running request gets `--request-timeout`, shortened by a
 * positive `timeout=` below it; past the deadline it is answered 504 (what the handler does later
 * is not sent), and a response the client still has not taken then is cut. A `timeout=` that does
 * not parse is a 400. Returns false when the request was answered.
 */
export function applyRequestDeadline(
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  query: URLSearchParams,
  l: RequestLimits,
): boolean {
  if (isLongRunning(req.method ?? 'GET', path, query)) return true;
  let timeoutMs = l.requestTimeoutMs;
  const raw = query.get('timeout');
  if (raw) {
    let asked: number;
    try {
      asked = parseGoDuration(raw);
    } catch (e) {
      sendStatus(res, badRequest(`invalid timeout specified in the request URL - ${(e as Error).message}`));
      return false;
    }
    if (asked > 0 && (timeoutMs <= 0 || asked < timeoutMs)) timeoutMs = asked;
  }
  if (timeoutMs <= 0) return true;
  const socket = req.socket;
  const timer = setTimeout(() => {
    if (!res.headersSent && !res.writableEnded) {
      sendStatus(
        res,
        new ApiTimeoutError('Timeout: request did not complete within requested timeout - context deadline exceeded'),
      );
      return;
    }
    // Answered but not taken: a client that does not read its response holds no socket past the deadline.
    if (unsent(socket) > 0) socket.destroy();
  }, timeoutMs);
  timer.unref();
  // The response is done when the client has it, not when it sits in the socket's buffers.
  res.once('close', () => {
    if (unsent(socket) === 0 || socket.destroyed) clearTimeout(timer);
  });
  return true;
}

/**
 * How long a watch may run: `timeoutSeconds`, else `timeout=` (a Go duration), else undefined.
 * A `timeoutSeconds` that is not an integer is a 400, as kube's query decoding answers it.
 */
export function watchTimeoutMs(query: URLSearchParams): number | undefined {
  const seconds = query.get('timeoutSeconds');
  if (seconds) {
    if (!/^[+-]?\d+$/.test(seconds))
      throw badRequest(`strconv.ParseInt: parsing ${JSON.stringify(seconds)}: invalid syntax`);
    const n = Number(seconds);
    return n > 0 ? n * 1000 : undefined;
  }
  const raw = query.get('timeout');
  if (!raw) return undefined;
  try {
    const ms = parseGoDuration(raw);
    return ms > 0 ? ms : undefined;
  } catch {
    return undefined;
  }
}

/** Bytes written to a socket that the kernel has not taken yet (JS buffer and libuv write queue). */
function unsent(socket: Socket): number {
  const handle = (socket as Socket & { _handle?: { writeQueueSize?: number } | null })._handle;
  return socket.writableLength + (handle?.writeQueueSize ?? 0);
}

function sendStatus(res: ServerResponse, e: unknown): void {
  const s = toStatus(e);
  sendJson(res, s.code, s);
}
