import http from 'node:http';
import https from 'node:https';
import type { IncomingMessage } from 'node:http';
import { componentUserAgent } from '../kube/version.js';
import { TimeoutError, UnavailableError, StowageError } from '../util/errors.js';
import { canFailOver, ServerList } from './balancer.js';
import { errorFromStatus, errorFromTransport } from './status.js';

/** How to reach a Kubernetes-compatible API server. */
export interface RestConfig {
  /** e.g. `https://127.0.0.1:6443` (http:// is accepted for tests and loopback). */
  readonly server: string;
  /**
   * Further API servers of the same cluster (same CA, same credentials), tried in order after
   * `server` when it cannot be reached; the one that answered stays current (client-side balancer).
   */
  readonly servers?: readonly string[];
  /** Bearer token; may be left out when a client certificate authenticates instead. */
  readonly token?: string;
  /** Client certificate and key (PEM): x509 authentication, CN the user, O the groups. */
  readonly certPem?: string;
  readonly keyPem?: string;
  /** PEM CA bundle that signed the server's certificate. */
  readonly caPem?: string;
  /** Skip server certificate verification (never in production). */
  readonly insecure?: boolean;
  /** Deadline of every non-watch request; default 30 s. */
  readonly timeoutMs?: number;
  /** Connection pool size per host; default 32. */
  readonly maxSockets?: number;
  /**
   * Sent as User-Agent; the API server names the field manager of this client's writes after its
   * part before the first '/'. Default: client-go's shape for the command `stowage`.
   */
  readonly userAgent?: string;
  /**
   * Talk HTTP over this unix socket instead of TCP (in-process components of `stowage up` use the
   * API server's private socket: no TLS, no loopback TCP). `server` still names the host for URLs.
   */
  readonly socketPath?: string;
  /**
   * Called before every write (any verb but GET); throwing refuses the write. A leader-elected
   * process passes its elector's `assertLeading`, so that nothing is written on stale leadership.
   */
  readonly writeGate?: () => void;
}

const DEFAULT_USER_AGENT = componentUserAgent('stowage');

export const DEFAULT_TIMEOUT_MS = 30_000; // client-go has no default; 30 s keeps a hung server from stalling a loop forever

export type Query = Record<string, string | number | boolean | undefined>;

export interface HttpRequest {
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  readonly path: string;
  readonly query?: Query;
  readonly body?: unknown;
  readonly contentType?: string;
  readonly signal?: AbortSignal;
  /** Overrides the config's deadline; for streams it only bounds the wait for response headers. */
  readonly timeoutMs?: number;
}

/** Low-level transport: keep-alive agents (requests, watches), JSON in and out, errors typed at this edge. */
export class HttpTransport {
  private readonly servers: ServerList;
  private readonly agent: http.Agent;
  /**
   * Watches hold their connection for as long as they run, so they get their own pool without a
   * cap: an informer per kind (the garbage collector watches every served kind) would otherwise
   * fill `maxSockets` and leave every ordinary request queued behind the watches.
   */
  private readonly watchAgent: http.Agent;
  private readonly mod: typeof http | typeof https;
  private readonly timeoutMs: number;

  constructor(private readonly cfg: RestConfig) {
    this.servers = new ServerList([cfg.server, ...(cfg.servers ?? []).filter((s) => s !== cfg.server)]);
    const secure = this.servers.current().protocol === 'https:';
    this.mod = secure ? https : http;
    const maxSockets = cfg.maxSockets ?? 32;
    this.agent = secure
      ? new https.Agent({
          keepAlive: true,
          maxSockets,
          ca: cfg.caPem,
          rejectUnauthorized: !cfg.insecure,
          cert: cfg.certPem,
          key: cfg.keyPem,
        })
      : new http.Agent({ keepAlive: true, maxSockets });
    this.watchAgent = secure
      ? new https.Agent({
          keepAlive: true,
          ca: cfg.caPem,
          rejectUnauthorized: !cfg.insecure,
          cert: cfg.certPem,
          key: cfg.keyPem,
        })
      : new http.Agent({ keepAlive: true });
    this.timeoutMs = cfg.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  /** Sends a request and parses the JSON answer; non-2xx answers become typed errors. */
  async json(req: HttpRequest): Promise<unknown> {
    if (req.method !== 'GET') this.cfg.writeGate?.();
    const deadline = req.timeoutMs ?? this.timeoutMs;
    const d = withDeadline(req.signal, deadline);
    try {
      const res = await this.sendAnywhere(req, d.signal);
      const text = await readBody(res);
      const parsed = parseJson(text);
      const code = res.statusCode ?? 0;
      if (code < 200 || code > 299) throw errorFromStatus(code, parsed, text.slice(0, 500));
      return parsed;
    } catch (e) {
      if (e instanceof StowageError) throw e;
      if (req.signal?.aborted) throw req.signal.reason;
      if (d.timedOut())
        throw new TimeoutError(`${req.method} ${req.path}: no answer within ${deadline} ms`, { cause: e });
      throw errorFromTransport(e);
    } finally {
      d.dispose();
    }
  }

  /**
   * Opens a streaming GET (watch). Resolves with the response once a 2xx status arrives; the
   * caller consumes and destroys it. Aborting `signal` destroys the stream.
   */
  async stream(req: HttpRequest): Promise<IncomingMessage> {
    const deadline = req.timeoutMs ?? this.timeoutMs;
    // The deadline covers only the wait for headers; the caller's signal covers the whole stream.
    const d = withDeadline(req.signal, deadline);
    const signal = req.signal;
    let res: IncomingMessage;
    try {
      res = await this.sendAnywhere(req, d.signal, this.watchAgent);
    } catch (e) {
      if (signal?.aborted) throw signal.reason;
      if (d.timedOut()) throw new TimeoutError(`${req.path}: no response headers within ${deadline} ms`, { cause: e });
      throw errorFromTransport(e);
    } finally {
      d.dispose();
    }
    const code = res.statusCode ?? 0;
    if (code < 200 || code > 299) {
      const text = await readBody(res).catch(() => '');
      throw errorFromStatus(code, parseJson(text), text.slice(0, 500));
    }
    if (req.signal) {
      const s = req.signal;
      const onAbort = (): void => void res.destroy();
      if (s.aborted) res.destroy();
      else {
        s.addEventListener('abort', onAbort, { once: true });
        res.once('close', () => s.removeEventListener('abort', onAbort));
      }
    }
    return res;
  }

  /** Frees pooled sockets. */
  close(): void {
    this.agent.destroy();
    this.watchAgent.destroy();
  }

  /** Sends to the current server, failing over to the next ones while they cannot be reached. */
  private async sendAnywhere(
    req: HttpRequest,
    signal: AbortSignal,
    agent: http.Agent = this.agent,
  ): Promise<IncomingMessage> {
    const attempts = this.cfg.socketPath ? 1 : this.servers.size;
    for (let i = 1; ; i++) {
      const base = this.servers.current();
      try {
        return await this.send(req, signal, agent, base);
      } catch (e) {
        if (signal.aborted || i >= attempts || !canFailOver(e, req.method)) throw e;
        this.servers.failed(base);
      }
    }
  }

  private send(req: HttpRequest, signal: AbortSignal, agent: http.Agent, base: URL): Promise<IncomingMessage> {
    const url = new URL(req.path, base);
    for (const [k, v] of Object.entries(req.query ?? {})) {
      if (v !== undefined && v !== '') url.searchParams.set(k, String(v));
    }
    const payload = req.body === undefined ? undefined : Buffer.from(JSON.stringify(req.body));
    const headers: Record<string, string> = {
      Accept: 'application/json',
      ...(this.cfg.token ? { Authorization: `Bearer ${this.cfg.token}` } : {}),
      'User-Agent': this.cfg.userAgent ?? DEFAULT_USER_AGENT,
    };
    if (payload) {
      headers['Content-Type'] = req.contentType ?? 'application/json';
      headers['Content-Length'] = String(payload.length);
    }
    return new Promise<IncomingMessage>((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason);
      const r = this.mod.request(
        url,
        {
          method: req.method,
          headers,
          agent,
          signal,
          ...(this.cfg.socketPath ? { socketPath: this.cfg.socketPath } : {}),
        },
        resolve,
      );
      r.on('error', reject);
      r.end(payload);
    });
  }
}

function readBody(res: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.on('error', reject);
    res.on('aborted', () => reject(new UnavailableError('connection closed mid-response')));
  });
}

function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text; // a non-JSON body (proxy error page): kept as the message
  }
}

/**
 * An AbortSignal that fires when `parent` aborts or `ms` pass, whichever is first. Unlike
 * AbortSignal.timeout/any it holds no timer or listener once disposed, which matters at
 * thousands of requests per second against a process-lifetime parent signal.
 */
function withDeadline(
  parent: AbortSignal | undefined,
  ms: number,
): { signal: AbortSignal; timedOut(): boolean; dispose(): void } {
  const ctl = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    ctl.abort(new TimeoutError(`deadline of ${ms} ms exceeded`));
  }, ms);
  const onAbort = (): void => ctl.abort(parent?.reason);
  if (parent?.aborted) ctl.abort(parent.reason);
  else parent?.addEventListener('abort', onAbort, { once: true });
  return {
    signal: ctl.signal,
    timedOut: () => timedOut,
    dispose: () => {
      clearTimeout(timer);
      parent?.removeEventListener('abort', onAbort);
    },
  };
}
