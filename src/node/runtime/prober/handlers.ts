/**
 * Runs one probe or lifecycle-hook handler against a container: exec through CRI ExecSync,
 * httpGet and tcpSocket to the pod's address (pods are on the host network, so the node's).
 * Outcomes are values with the kubelet's output texts; only a bug throws.
 */
import { connect } from 'node:net';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import * as grpc from '@grpc/grpc-js';
import type { Container, ExecAction, HTTPGetAction, TCPSocketAction } from 'kubernetes-types/core/v1.js';
import type { CriClient } from '../client.js';
import { CriError } from '../client.js';

export type ProbeResult = 'success' | 'failure';

export interface HandlerOutcome {
  readonly result: ProbeResult;
  /** What the kubelet reports (the command's output, the HTTP status, the dial error). */
  readonly output: string;
}

/** One handler: a probe's or a lifecycle hook's (exactly one action set). */
export interface Handler {
  readonly exec?: ExecAction;
  readonly httpGet?: HTTPGetAction;
  readonly tcpSocket?: TCPSocketAction;
}

export interface HandlerTarget {
  readonly cri: Pick<CriClient, 'execSync'>;
  readonly containerId: string;
  readonly container: Container;
  /** The pod's address (the node's). */
  readonly podIP: string;
  readonly signal?: AbortSignal;
}

// The kubelet identifies its probes as kube-probe/<major>.<minor>.
const USER_AGENT = 'kube-probe/1.31';

/** A named or numbered port of the container; throws when a name is not among the container's ports. */
export function resolvePort(port: number | string | undefined, c: Container): number {
  if (typeof port === 'number') return port;
  if (port === undefined) throw new Error('no port');
  if (/^\d+$/.test(port)) return Number(port);
  const p = c.ports?.find((x) => x.name === port);
  if (!p) throw new Error(`couldn't find port: ${port} in ${c.name}`);
  return p.containerPort;
}

export async function runHandler(h: Handler, t: HandlerTarget, timeoutSeconds: number): Promise<HandlerOutcome> {
  if (h.exec) return runExec(h.exec.command ?? [], t, timeoutSeconds);
  const get = h.httpGet;
  if (get) return withPort(get.port, t.container, (port) => runHttpGet(get, port, t, timeoutSeconds));
  const tcp = h.tcpSocket;
  if (tcp) return withPort(tcp.port, t.container, (port) => runTcp(tcp, port, t, timeoutSeconds));
  return { result: 'failure', output: 'missing probe handler' };
}

async function runExec(cmd: readonly string[], t: HandlerTarget, timeoutSeconds: number): Promise<HandlerOutcome> {
  try {
    const r = await t.cri.execSync(t.containerId, cmd, timeoutSeconds, { signal: t.signal });
    const output = Buffer.concat([Buffer.from(r.stdout), Buffer.from(r.stderr)]).toString('utf8');
    return r.exitCode === 0 ? { result: 'success', output } : { result: 'failure', output };
  } catch (e) {
    if (e instanceof CriError && e.grpcCode === grpc.status.DEADLINE_EXCEEDED)
      return { result: 'failure', output: `command ${JSON.stringify(cmd.join(' '))} timed out` };
    return { result: 'failure', output: e instanceof Error ? e.message : String(e) };
  }
}

function hostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** Runs `f` on the resolved port; a port name the container does not have is a failure. */
function withPort(
  port: number | string,
  c: Container,
  f: (port: number) => Promise<HandlerOutcome>,
): Promise<HandlerOutcome> {
  let n: number;
  try {
    n = resolvePort(port, c);
  } catch (e) {
    return Promise.resolve({ result: 'failure', output: e instanceof Error ? e.message : String(e) });
  }
  return f(n);
}

function runHttpGet(g: HTTPGetAction, port: number, t: HandlerTarget, timeoutSeconds: number): Promise<HandlerOutcome> {
  const host = g.host || t.podIP;
  const scheme = (g.scheme ?? 'HTTP').toLowerCase();
  const path = g.path ? (g.path.startsWith('/') ? g.path : `/${g.path}`) : '/';
  const url = `${scheme}://${hostPort(host, port)}${path}`;
  const headers: Record<string, string> = { 'User-Agent': USER_AGENT, Accept: '*/*' };
  for (const h of g.httpHeaders ?? []) headers[h.name] = h.value;
  const request = scheme === 'https' ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    // The kubelet does not verify a probe's certificate.
    const req = request(
      url,
      { method: 'GET', headers, timeout: timeoutSeconds * 1000, rejectUnauthorized: false, signal: t.signal },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (b: Buffer) => {
          if (size < 10 * 1024) chunks.push(b); // the kubelet reads at most 10 KiB of the body
          size += b.length;
        });
        res.on('end', () => {
          const code = res.statusCode ?? 0;
          const body = Buffer.concat(chunks)
            .toString('utf8')
            .slice(0, 10 * 1024);
          // 2xx and 3xx succeed (a redirect elsewhere is only a warning for the kubelet).
          resolve(
            code >= 200 && code < 400
              ? { result: 'success', output: body }
              : { result: 'failure', output: `HTTP probe failed with statuscode: ${code}` },
          );
        });
        res.on('error', (e) => resolve({ result: 'failure', output: `Get "${url}": ${e.message}` }));
      },
    );
    req.on('timeout', () => {
      req.destroy();
      resolve({
        result: 'failure',
        output: `Get "${url}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`,
      });
    });
    req.on('error', (e) => resolve({ result: 'failure', output: `Get "${url}": ${dialError(e, host, port)}` }));
    req.end();
  });
}

function dialError(e: Error, host: string, port: number): string {
  const code = (e as NodeJS.ErrnoException).code;
  if (code === 'ECONNREFUSED') return `dial tcp ${hostPort(host, port)}: connect: connection refused`;
  return e.message;
}

function runTcp(s: TCPSocketAction, port: number, t: HandlerTarget, timeoutSeconds: number): Promise<HandlerOutcome> {
  const host = s.host || t.podIP;
  return new Promise((resolve) => {
    const sock = connect({ host, port, timeout: timeoutSeconds * 1000 });
    sock.once('connect', () => {
      sock.destroy();
      resolve({ result: 'success', output: '' });
    });
    sock.once('timeout', () => {
      sock.destroy();
      resolve({ result: 'failure', output: `dial tcp ${hostPort(host, port)}: i/o timeout` });
    });
    sock.once('error', (e) => resolve({ result: 'failure', output: dialError(e, host, port) }));
  });
}
