/**
 * Unary gRPC calls to etcd straight over node:http2: one POST per call on one shared HTTP/2
 * session, the message length-prefixed, the status in the trailers. It does what the store's
 * unary calls need of a gRPC channel (wait for a connection until the deadline, move to the next
 * endpoint when one is unreachable, a deadline per call) at about half the CPU per call of
 * grpc-js's layered call stack, which dominated the API server's cost per write on etcd.
 */
import http2 from 'node:http2';

/** A failed call, shaped as grpc-js reports one (`code` is a gRPC status code). */
export class UnaryCallError extends Error {
  constructor(
    readonly code: number,
    readonly details: string,
  ) {
    super(`${code} ${details}`);
    this.name = 'UnaryCallError';
  }
}

// gRPC status codes used here.
const DEADLINE_EXCEEDED = 4;
const UNAVAILABLE = 14;
const INTERNAL = 13;
const RECONNECT_DELAY_MS = 100; // as the grpc-js channel's initial reconnect backoff
// clientv3's retries of a read that reached etcd: at most 100, 25 ms apart with 10 % jitter, within the call's deadline.
const MAX_RETRIES = 100;
const retryWaitMs = (): number => 25 * (0.9 + Math.random() * 0.2);

/**
 * Whether a failed call may be sent again (clientv3's rule): only on Unavailable; a read
 * (`repeatable`) always, a write only when it was never sent (no connection was made), since a
 * write etcd may have applied must not be applied twice.
 */
export function mayRetry(e: unknown, sent: boolean, repeatable: boolean): boolean {
  return e instanceof UnaryCallError && e.code === UNAVAILABLE && (repeatable || !sent);
}

export interface UnaryTls {
  readonly ca?: Buffer;
  readonly cert?: Buffer;
  readonly key?: Buffer;
}

interface Session {
  readonly h2: http2.ClientHttp2Session;
  connected: boolean;
  /** Last time any answer arrived on this session. */
  lastHeardMs: number;
}

export class UnaryChannel {
  private session: Session | undefined;
  private nextEndpoint = 0;
  private closed = false;

  /** `origins`: `http://host:port` or `https://host:port`, tried in turn. */
  constructor(
    private readonly origins: readonly string[],
    private readonly tls: UnaryTls | undefined,
  ) {
    if (origins.length === 0) throw new Error('no etcd endpoints');
  }

  /**
   * Sends one serialized request to `path`; resolves with the serialized reply. A `repeatable`
   * call (a read) is sent again when etcd answers Unavailable (e.g. "leader changed" while the
   * members elect a new leader) or the connection breaks, as etcd's clientv3 retries reads.
   */
  async call(path: string, message: Buffer, timeoutMs: number, o: { repeatable?: boolean } = {}): Promise<Buffer> {
    const deadline = Date.now() + timeoutMs;
    let resent = 0;
    for (;;) {
      if (this.closed) throw new UnaryCallError(UNAVAILABLE, 'channel closed');
      const s = this.connect();
      try {
        return await this.once(s, path, message, deadline);
      } catch (e) {
        if (!mayRetry(e, s.connected, o.repeatable ?? false) || (s.connected && ++resent > MAX_RETRIES)) throw e;
        const left = deadline - Date.now();
        if (left <= 0)
          throw s.connected
            ? e
            : new UnaryCallError(
                DEADLINE_EXCEEDED,
                `Deadline exceeded waiting for a connection (${(e as UnaryCallError).details})`,
              );
        await new Promise((r) => setTimeout(r, Math.min(s.connected ? retryWaitMs() : RECONNECT_DELAY_MS, left)));
      }
    }
  }

  close(): void {
    this.closed = true;
    this.session?.h2.close();
    this.session = undefined;
  }

  private connect(): Session {
    const cur = this.session;
    if (cur && !cur.h2.closed && !cur.h2.destroyed) return cur;
    const origin = this.origins[this.nextEndpoint++ % this.origins.length]!;
    const h2 = http2.connect(
      origin,
      origin.startsWith('https:') ? { ca: this.tls?.ca, cert: this.tls?.cert, key: this.tls?.key } : {},
    );
    const s: Session = { h2, connected: false, lastHeardMs: Date.now() };
    h2.once('connect', () => (s.connected = true));
    h2.on('error', () => undefined); // surfaced on the streams
    h2.once('close', () => {
      if (this.session === s) this.session = undefined;
    });
    h2.once('goaway', () => {
      if (this.session === s) this.session = undefined; // new calls go to a new session
    });
    this.session = s;
    return s;
  }

  private once(s: Session, path: string, message: Buffer, deadline: number): Promise<Buffer> {
    return new Promise<Buffer>((resolve, reject) => {
      const startedMs = Date.now();
      const frame = Buffer.allocUnsafe(5 + message.length);
      frame[0] = 0; // not compressed
      frame.writeUInt32BE(message.length, 1);
      message.copy(frame, 5);
      let stream: http2.ClientHttp2Stream;
      try {
        stream = s.h2.request({
          ':method': 'POST',
          ':path': path,
          'content-type': 'application/grpc',
          te: 'trailers',
          'grpc-timeout': `${Math.max(1, deadline - Date.now())}m`,
        });
      } catch (e) {
        return reject(new UnaryCallError(UNAVAILABLE, e instanceof Error ? e.message : String(e)));
      }
      const chunks: Buffer[] = [];
      let status: string | undefined;
      let statusMessage = '';
      let httpStatus = 0;
      let settled = false;
      const settle = (f: () => void): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        f();
      };
      const timer = setTimeout(
        () => {
          settle(() => reject(new UnaryCallError(DEADLINE_EXCEEDED, 'Deadline exceeded')));
          stream.close(http2.constants.NGHTTP2_CANCEL);
          // Nothing heard on the session since this call began: the member is gone or hung; the
          // next call connects afresh (to the next endpoint), as grpc-js's keepalive would make it.
          if (s.lastHeardMs < startedMs) s.h2.destroy();
        },
        Math.max(0, deadline - Date.now()),
      );
      const statusFrom = (h: http2.IncomingHttpHeaders): void => {
        const st = h['grpc-status'];
        if (typeof st === 'string') status = st;
        const msg = h['grpc-message'];
        if (typeof msg === 'string') statusMessage = decodeMessage(msg);
      };
      stream.on('response', (h) => {
        s.lastHeardMs = Date.now();
        httpStatus = Number(h[':status'] ?? 0);
        statusFrom(h); // a trailers-only answer carries the status in the headers
      });
      stream.on('trailers', (h) => statusFrom(h));
      stream.on('data', (c: Buffer) => {
        s.lastHeardMs = Date.now();
        chunks.push(c);
      });
      stream.on('error', (e: Error) => settle(() => reject(new UnaryCallError(UNAVAILABLE, e.message))));
      stream.on('close', () =>
        settle(() => {
          if (status === undefined) {
            return reject(
              new UnaryCallError(
                UNAVAILABLE,
                httpStatus ? `HTTP ${httpStatus} without a gRPC status` : 'stream closed without an answer',
              ),
            );
          }
          if (status !== '0') return reject(new UnaryCallError(Number(status), statusMessage));
          const body = Buffer.concat(chunks);
          if (body.length < 5 || body[0] !== 0)
            return reject(new UnaryCallError(INTERNAL, 'malformed or compressed reply'));
          const len = body.readUInt32BE(1);
          if (body.length < 5 + len) return reject(new UnaryCallError(INTERNAL, 'truncated reply'));
          resolve(body.subarray(5, 5 + len));
        }),
      );
      stream.end(frame);
    });
  }
}

function decodeMessage(m: string): string {
  try {
    return decodeURIComponent(m);
  } catch {
    return m;
  }
}
