import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * Connection-level defences: how long a client may take to send its headers and its whole request,
 * how large the headers may be, and what happens to a keep-alive connection whose request body the
 * server did not read (a request refused early: 413, 401, 415, 429, 404 …).
 */
export interface ConnectionLimits {
  /** Time to send the request headers, TLS handshake included (kube's ReadHeaderTimeout: 32 s). */
  readonly headerTimeoutMs: number;
  /** Time to send the whole request, body included; responses (watches) are not bounded by it. */
  readonly requestReadTimeoutMs: number;
  /** Largest request head (Go's DefaultMaxHeaderBytes, kube's: 1 MiB); larger gets 431. */
  readonly maxHeaderBytes: number;
  /** Idle time of a keep-alive connection between requests. */
  readonly keepAliveTimeoutMs: number;
}

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = {
  headerTimeoutMs: 32_000,
  requestReadTimeoutMs: 60_000,
  maxHeaderBytes: 1 << 20,
  keepAliveTimeoutMs: 120_000,
};

/** Options for `http(s).createServer` that enforce the limits. */
export function serverOptions(l: ConnectionLimits): {
  maxHeaderSize: number;
  headersTimeout: number;
  requestTimeout: number;
  keepAlive: true;
  keepAliveTimeout: number;
  handshakeTimeout: number;
  connectionsCheckingInterval: number;
} {
  return {
    maxHeaderSize: l.maxHeaderBytes,
    headersTimeout: l.headerTimeoutMs,
    requestTimeout: Math.max(l.requestReadTimeoutMs, l.headerTimeoutMs),
    keepAlive: true,
    keepAliveTimeout: l.keepAliveTimeoutMs,
    handshakeTimeout: l.headerTimeoutMs,
    // How often Node looks for connections past those deadlines (its default is 30 s).
    connectionsCheckingInterval: Math.min(1_000, l.headerTimeoutMs),
  };
}

/**
 * Go's net/http discards up to 256 KiB of a request body its handler left unread and keeps the
 * connection; past that it closes it. A keep-alive client must never find its next request queued
 * behind the rest of a refused body.
 */
const DRAIN_LIMIT_BYTES = 256 * 1024;

/**
 * Makes a response to a request whose body is left unread safe for keep-alive: when the body may
 * exceed the drain limit (chunked, or large) and is not fully read when the answer goes out, the
 * answer says `Connection: close` and the connection ends after it. A small body needs nothing:
 * Node discards what the handler left, as Go does.
 */
export function guardUnreadBody(req: IncomingMessage, res: ServerResponse): void {
  // No body or a small one: Node itself discards what the handler left and keeps the connection.
  if (bodyFitsDrain(req)) return;
  const writeHead = res.writeHead;
  res.writeHead = function (this: ServerResponse, ...args: Parameters<ServerResponse['writeHead']>) {
    if (!req.complete) this.setHeader('Connection', 'close');
    return writeHead.apply(this, args);
  } as ServerResponse['writeHead'];
  res.once('finish', () => {
    if (!req.complete && !req.destroyed) req.socket.destroySoon();
  });
}

function bodyFitsDrain(req: IncomingMessage): boolean {
  const len = req.headers['content-length'];
  if (len === undefined) return req.headers['transfer-encoding'] === undefined; // no body at all
  const n = Number(len);
  return Number.isFinite(n) && n <= DRAIN_LIMIT_BYTES;
}
