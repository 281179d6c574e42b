/**
 * A plain-HTTP front for the test API server that records every request passing through it: one
 * per client process, so that a test can tell which process wrote what (the API server keeps no
 * audit log). Streams (watches) are piped both ways.
 */
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Target } from './http.js';

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly atMs: number;
}

export interface RecordingProxy {
  /** `http://127.0.0.1:<port>`, for a kubeconfig. */
  readonly url: string;
  readonly requests: readonly RecordedRequest[];
  /** Requests other than GET (watches are GETs). */
  writes(): RecordedRequest[];
  close(): Promise<void>;
}

/**
 * `delayMs`, when given, holds each request that many ms (asked per request) before forwarding it:
 * a slow API server for one kind of request (the pod list after a restart, say).
 */
export async function startRecordingProxy(
  upstream: Target,
  o: { delayMs?: (method: string, path: string) => number } = {},
): Promise<RecordingProxy> {
  const base = new URL(upstream.baseUrl);
  const agent = new https.Agent({ keepAlive: true, ca: upstream.caPem });
  const requests: RecordedRequest[] = [];
  const server = http.createServer((req, res) => {
    requests.push({ method: req.method ?? '', path: req.url ?? '', atMs: Date.now() });
    const wait = o.delayMs?.(req.method ?? '', req.url ?? '') ?? 0;
    if (wait > 0) {
      req.pause();
      const t = setTimeout(() => forward(req, res), wait);
      res.on('close', () => clearTimeout(t));
    } else forward(req, res);
  });
  const forward = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    const up = https.request(
      {
        host: base.hostname,
        port: base.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: base.host },
        agent,
      },
      (ur) => {
        res.writeHead(ur.statusCode ?? 502, ur.headers);
        res.flushHeaders();
        ur.pipe(res);
      },
    );
    up.on('error', () => res.destroy());
    res.on('close', () => up.destroy());
    req.pipe(up);
    req.resume();
  };
  const sockets = new Set<import('node:net').Socket>();
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    writes: () => requests.filter((r) => r.method !== 'GET'),
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
      agent.destroy();
    },
  };
}

/** A kubeconfig for a client of `proxy`, with the admin token. */
export function proxyKubeconfig(proxy: RecordingProxy, token: string): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters: [{name: p, cluster: {server: "' + proxy.url + '"}}]',
    'users: [{name: u, user: {token: "' + token + '"}}]',
    'contexts: [{name: c, context: {cluster: p, user: u}}]',
    'current-context: c',
    '',
  ].join('\n');
}
