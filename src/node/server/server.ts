/**
 * The node's HTTPS endpoint (the kubelet's :10250): container logs and exec/attach for the API
 * server. Clients authenticate with a certificate from the cluster CA; only the API server's
 * (CN kube-apiserver-kubelet-client, or group system:masters) may use it. A client certificate
 * needs no callback to the API server and no shared secret beyond the CA the node already trusts,
 * so it works unchanged when the node runs on another host. The serving certificate is
 * self-signed, as the kubelet's is by default (the API server does not verify it).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { chooseChannelProtocol } from '../../kube/channels.js';
import { KUBELET_CLIENT_CN, KUBELET_CLIENT_ORG } from '../../kube/names.js';
import type { Logger } from '../../util/log.js';
import { issueLeaf } from '../../util/pki.js';
import { acceptKey } from '../../util/websocket.js';
import type { CriClient } from '../runtime/client.js';
import { logContainerId, mustHaveContainer, NodeRequestError, runningContainerId } from './containers.js';
import { bridgeToRuntime, failureStatus, ChannelSocket, streamOptions } from './exec.js';
import { logFileExists, streamContainerLog, type LogRequest } from './logs.js';

/** The kubelet's default port. */
export const DEFAULT_NODE_PORT = 10250;

export interface NodeServerOptions {
  readonly address: string;
  /** 0 = any free port. */
  readonly port: number;
  /** CA bundle that client certificates must chain to (the kubelet's --client-ca-file). */
  readonly clientCaPem: string;
  /** Hosts for the self-signed serving certificate. */
  readonly hosts: readonly string[];
  /** The node this endpoint serves: pods bound elsewhere are not its own. */
  readonly nodeName: string;
  /** The pod as the API has it (its status names the containers). */
  readonly getPod: (namespace: string, name: string) => Promise<Pod | undefined>;
  /** The runtime; without one, logs and exec answer that the node runs no containers. */
  readonly cri?: CriClient;
  readonly log: Logger;
}

export interface NodeServer {
  readonly port: number;
  close(): Promise<void>;
}

function sendText(res: ServerResponse, code: number, text: string): void {
  res.writeHead(code, { 'Content-Type': 'text/plain; charset=utf-8' });
  res.end(`${text}\n`);
}

/** Rejects a connection without the API server's certificate: 401 unauthenticated, 403 someone else. */
function authorized(req: IncomingMessage): { ok: true } | { ok: false; code: 401 | 403; text: string } {
  const sock = req.socket as TLSSocket;
  if (!sock.authorized) return { ok: false, code: 401, text: 'Unauthorized' };
  const subject = sock.getPeerCertificate().subject as { CN?: string | string[]; O?: string | string[] } | undefined;
  const list = (v: string | string[] | undefined): string[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);
  const cn = list(subject?.CN)[0] ?? '';
  if (cn === KUBELET_CLIENT_CN || list(subject?.O).includes(KUBELET_CLIENT_ORG)) return { ok: true };
  return { ok: false, code: 403, text: `Forbidden (user=${cn}, verb=get, resource=nodes, subresource(s)=[proxy])` };
}

/** `/containerLogs/<ns>/<pod>/<container>`, `/exec/<ns>/<pod>/<container>`, `/attach/…`. */
function route(
  pathname: string,
): { kind: 'containerLogs' | 'exec' | 'attach'; namespace: string; pod: string; container: string } | undefined {
  const segs = pathname
    .split('/')
    .filter(Boolean)
    .map((s) => decodeURIComponent(s));
  const [kind, namespace, pod, container] = segs;
  if (segs.length !== 4 || (kind !== 'containerLogs' && kind !== 'exec' && kind !== 'attach')) return undefined;
  return { kind, namespace: namespace!, pod: pod!, container: container! };
}

function logRequest(q: URLSearchParams): LogRequest {
  const num = (k: string): number | undefined => (q.has(k) ? Number(q.get(k)) : undefined);
  const sinceSeconds = num('sinceSeconds');
  const sinceTime = q.get('sinceTime');
  return {
    follow: q.get('follow') === 'true',
    timestamps: q.get('timestamps') === 'true',
    tailLines: num('tailLines'),
    limitBytes: num('limitBytes'),
    sinceMs:
      sinceSeconds !== undefined ? Date.now() - sinceSeconds * 1000 : sinceTime ? Date.parse(sinceTime) : undefined,
  };
}

export async function startNodeServer(o: NodeServerOptions): Promise<NodeServer> {
  const serving = issueLeaf({
    commonName: `${o.hosts[0] ?? 'node'}@stowage`,
    hosts: o.hosts,
    usage: 'server',
    validDays: 365,
  });
  const server: Server = createServer({
    cert: serving.certPem,
    key: serving.keyPem,
    ca: o.clientCaPem,
    requestCert: true,
    rejectUnauthorized: false,
  });

  /** The pod with `container` in its spec, as the kubelet finds it among its own pods: 404 otherwise. */
  const pod = async (namespace: string, name: string, container: string): Promise<Pod> => {
    const p = await o.getPod(namespace, name);
    if (!p || p.spec?.nodeName !== o.nodeName) throw new NodeRequestError(`pod "${name}" does not exist`, 404);
    mustHaveContainer(p, container);
    return p;
  };
  const runtime = (): CriClient => {
    if (!o.cri)
      throw new NodeRequestError(
        'this node runs no container runtime: pods get their volumes but their containers do not run',
      );
    return o.cri;
  };

  async function serveLogs(
    _req: IncomingMessage,
    res: ServerResponse,
    r: { namespace: string; pod: string; container: string },
    q: URLSearchParams,
  ): Promise<void> {
    const p = await pod(r.namespace, r.pod, r.container);
    const cri = runtime();
    const id = logContainerId(p, r.container, q.get('previous') === 'true');
    const st = (await cri.containerStatus(id)).status;
    const path = st?.logPath ?? '';
    if (!path || !(await logFileExists(path)))
      throw new NodeRequestError(
        `failed to get container status "${id}": log file of container "${r.container}" not found`,
      );
    const ctl = new AbortController();
    res.on('close', () => ctl.abort());
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    res.flushHeaders();
    const running = async (): Promise<boolean> =>
      (await cri.containerStatus(id).catch(() => undefined))?.status?.state === 'CONTAINER_RUNNING';
    await streamContainerLog(
      path,
      logRequest(q),
      {
        signal: ctl.signal,
        write: (b) => new Promise<void>((resolve) => (res.write(b) ? resolve() : res.once('drain', () => resolve()))),
      },
      running,
    );
    res.end();
  }

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const auth = authorized(req);
    if (!auth.ok) return sendText(res, auth.code, auth.text);
    const url = new URL(req.url ?? '/', 'https://node');
    if (url.pathname === '/healthz') return sendText(res, 200, 'ok');
    const r = route(url.pathname);
    if (!r) return sendText(res, 404, '404 page not found');
    if (r.kind !== 'containerLogs')
      return sendText(res, 400, 'exec and attach need a WebSocket upgrade (v5.channel.k8s.io or v4.channel.k8s.io)');
    serveLogs(req, res, r, url.searchParams).catch((e: unknown) => {
      const msg = e instanceof Error ? e.message : String(e);
      if (res.headersSent) return void res.end();
      sendText(res, e instanceof NodeRequestError ? e.code : 500, msg);
    });
  });

  const upgraded = new Set<Duplex>();
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    upgraded.add(socket);
    socket.on('close', () => upgraded.delete(socket));
    socket.on('error', () => socket.destroy());
    const refuse = (code: number, text: string): void => {
      socket.end(
        `HTTP/1.1 ${code} ${code === 401 ? 'Unauthorized' : code === 403 ? 'Forbidden' : code === 404 ? 'Not Found' : 'Bad Request'}\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n${text}\n`,
      );
    };
    const auth = authorized(req);
    if (!auth.ok) return refuse(auth.code, auth.text);
    const url = new URL(req.url ?? '/', 'https://node');
    const r = route(url.pathname);
    if (!r || r.kind === 'containerLogs') return refuse(404, '404 page not found');
    const protocol = chooseChannelProtocol(req.headers['sec-websocket-protocol']);
    const key = req.headers['sec-websocket-key'];
    if ((req.headers.upgrade ?? '').toLowerCase() !== 'websocket' || !key || !protocol) {
      return refuse(400, 'only WebSocket upgrades with v5.channel.k8s.io or v4.channel.k8s.io are served');
    }
    socket.write(
      `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${acceptKey(key)}\r\nSec-WebSocket-Protocol: ${protocol}\r\n\r\n`,
    );
    const opts = streamOptions(url.searchParams);
    void (async () => {
      try {
        const p = await pod(r.namespace, r.pod, r.container);
        const cri = runtime();
        const id = runningContainerId(p, r.container);
        const res =
          r.kind === 'exec'
            ? await cri.exec({
                containerId: id,
                cmd: url.searchParams.getAll('command'),
                tty: opts.tty,
                stdin: opts.stdin,
                stdout: opts.stdout,
                stderr: opts.stderr,
              })
            : await cri.attach({
                containerId: id,
                tty: opts.tty,
                stdin: opts.stdin,
                stdout: opts.stdout,
                stderr: opts.stderr,
              });
        await bridgeToRuntime({ ws: socket, head, protocol, url: res.url, opts, log: o.log });
      } catch (e) {
        new ChannelSocket(socket).finish(failureStatus(e instanceof Error ? e.message : String(e)));
      }
    })();
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.address, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  o.log.info('node endpoint listening', { address: o.address, port });
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        for (const s of upgraded) s.destroy();
        server.close(() => resolve());
      }),
  };
}
