/**
 * `pods/log`, `pods/exec` and `pods/attach`: kube-apiserver's LogLocation / streamLocation checks
 * (the container, the pod's node), then the pod's node endpoint does the work. Logs are streamed
 * back as plain text; exec and attach WebSocket upgrades are relayed byte for byte (the node speaks
 * v5/v4.channel.k8s.io); SPDY upgrades (kubectl before 1.30) are translated (spdyexec.ts).
 */
import { request as httpsRequest } from 'node:https';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { connect as tlsConnect } from 'node:tls';
import type { Node, Pod } from 'kubernetes-types/core/v1.js';
import { channelMessage, chooseChannelProtocol, STREAM } from '../../kube/channels.js';
import { InternalError } from '../../util/errors.js';
import { acceptKey, closePayload, encodeFrame, OPCODE } from '../../util/websocket.js';
import { nodeTarget, nodeTlsOptions, type NodeClientCert } from '../nodeconn.js';
import { forbidden as forbiddenCause, invalid as invalidCause } from '../resources/fielderrors.js';
import { formatInvalidMessage } from '../resources/common.js';
import { ApiForbiddenError, ApiNotFoundError, ApiUnauthorizedError, badRequest, invalid, toStatus } from '../status.js';
import type { FieldCause } from '../../util/errors.js';
import type { ResourceCall } from './request.js';

/** What the pod streaming subresources need besides the pod: its node, and how to authenticate to it. */
export interface PodStreaming {
  readonly node: (name: string) => Node | undefined;
  /** Undefined: this API server has no client certificate for nodes (logs and exec answer 500). */
  readonly cert?: NodeClientCert;
}

export const POD_STREAM_SUBRESOURCES = ['log', 'exec', 'attach'] as const;

/** PodLogOptions from the query, validated as kube's ValidatePodLogOptions (422 PodLogOptions). */
export interface PodLogOptions {
  readonly container?: string;
  readonly follow: boolean;
  readonly previous: boolean;
  readonly timestamps: boolean;
  readonly tailLines?: number;
  readonly limitBytes?: number;
  readonly sinceSeconds?: number;
  readonly sinceTime?: string;
}

function boolParam(q: URLSearchParams, k: string): boolean {
  const v = q.get(k);
  if (v === null || v === '') return false;
  if (['1', 't', 'T', 'true', 'TRUE', 'True'].includes(v)) return true;
  if (['0', 'f', 'F', 'false', 'FALSE', 'False'].includes(v)) return false;
  throw badRequest(`strconv.ParseBool: parsing "${v}": invalid syntax`);
}

function intParam(q: URLSearchParams, k: string): number | undefined {
  const v = q.get(k);
  if (v === null) return undefined;
  if (!/^[+-]?\d+$/.test(v)) throw badRequest(`strconv.ParseInt: parsing "${v}": invalid syntax`);
  return Number(v);
}

export function parsePodLogOptions(q: URLSearchParams, podName: string): PodLogOptions {
  const sinceTime = q.get('sinceTime') ?? undefined;
  if (sinceTime !== undefined && Number.isNaN(Date.parse(sinceTime))) {
    throw badRequest(
      `parsing time "${sinceTime}" as "2006-01-02T15:04:05Z07:00": cannot parse "${sinceTime}" as "2006"`,
    );
  }
  const o: PodLogOptions = {
    container: q.get('container') || undefined,
    follow: boolParam(q, 'follow'),
    previous: boolParam(q, 'previous'),
    timestamps: boolParam(q, 'timestamps'),
    tailLines: intParam(q, 'tailLines'),
    limitBytes: intParam(q, 'limitBytes'),
    sinceSeconds: intParam(q, 'sinceSeconds'),
    sinceTime,
  };
  const causes: FieldCause[] = [];
  if (o.tailLines !== undefined && o.tailLines < 0)
    causes.push(invalidCause('tailLines', o.tailLines, 'must be greater than or equal to 0'));
  if (o.limitBytes !== undefined && o.limitBytes < 1)
    causes.push(invalidCause('limitBytes', o.limitBytes, 'must be greater than 0'));
  if (o.sinceSeconds !== undefined && o.sinceTime !== undefined)
    causes.push(forbiddenCause('', 'at most one of `sinceTime` or `sinceSeconds` may be specified'));
  else if (o.sinceSeconds !== undefined && o.sinceSeconds < 1)
    causes.push(invalidCause('sinceSeconds', o.sinceSeconds, 'must be greater than 0'));
  if (causes.length)
    throw invalid('PodLogOptions', '', podName, causes, formatInvalidMessage('PodLogOptions', podName, causes, ''));
  return o;
}

/** kube's validateContainer (logs) and streamLocation's container check (exec, attach). */
export function podContainer(pod: Pod, container: string | undefined, purpose: 'log' | 'exec'): string {
  const name = pod.metadata?.name ?? '';
  const spec = pod.spec ?? { containers: [] };
  const containers = (spec.containers ?? []).map((c) => c.name);
  const inits = (spec.initContainers ?? []).map((c) => c.name);
  const ephemeral = (spec.ephemeralContainers ?? []).map((c) => c.name);
  if (container) {
    if (![...containers, ...inits, ...ephemeral].includes(container))
      throw badRequest(`container ${container} is not valid for pod ${name}`);
    return container;
  }
  if (containers.length === 1) return containers[0]!;
  if (containers.length === 0) throw badRequest(`a container name must be specified for pod ${name}`);
  if (purpose === 'log')
    throw badRequest(
      `a container name must be specified for pod ${name}, choose one of: [${[...inits, ...containers, ...ephemeral].join(' ')}]`,
    );
  const more = inits.length ? ` or one of the init containers: [${inits.join(' ')}]` : '';
  throw badRequest(
    `a container name must be specified for pod ${name}, choose one of: [${containers.join(' ')}]${more}`,
  );
}

/** kube's GenericHttpResponseChecker: a node's refusal becomes a Status of the matching code. */
function nodeAnswer(status: number, body: string): Error {
  const text = body.trim();
  if (status === 400) return badRequest(text);
  if (status === 404) return new ApiNotFoundError(text);
  if (status === 401) return new ApiUnauthorizedError(text);
  if (status === 403) return new ApiForbiddenError(text);
  return new InternalError(text);
}

/** GET pods/<name>/log: plain text from the node, streamed while it follows. */
export async function handlePodLog({ r, req, res }: ResourceCall, s: PodStreaming): Promise<void> {
  const name = r.name!;
  const opts = parsePodLogOptions(r.query, name);
  const pod = r.storage.mustGet(r.namespace, name).obj as Pod;
  const container = podContainer(pod, opts.container, 'log');
  const nodeName = pod.spec?.nodeName;
  // A pod not yet on a node has no log: kube answers with an empty stream.
  if (!nodeName) {
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    res.end();
    return;
  }
  if (!s.cert) throw new InternalError('this API server has no client certificate for node endpoints');
  const target = nodeTarget(s.node(nodeName), nodeName);
  const q = new URLSearchParams();
  for (const k of ['follow', 'previous', 'timestamps'] as const) if (opts[k]) q.set(k, 'true');
  for (const k of ['tailLines', 'limitBytes', 'sinceSeconds', 'sinceTime'] as const)
    if (opts[k] !== undefined) q.set(k, String(opts[k]));
  const path = `/containerLogs/${encodeURIComponent(r.namespace ?? '')}/${encodeURIComponent(name)}/${encodeURIComponent(container)}?${q}`;
  const upstream = await new Promise<IncomingMessage>((resolve, reject) => {
    const nreq = httpsRequest({ ...nodeTlsOptions(target, s.cert!), method: 'GET', path, timeout: 30_000 }, resolve);
    nreq.on('timeout', () => nreq.destroy(new Error(`node ${nodeName} did not answer within 30s`)));
    nreq.on('error', (e) =>
      reject(new InternalError(`Get "https://${target.host}:${target.port}${path}": ${e.message}`)),
    );
    req.on('close', () => nreq.destroy());
    nreq.end();
  });
  upstream.socket.setTimeout(0);
  if (upstream.statusCode !== 200) {
    const chunks: Buffer[] = [];
    for await (const c of upstream) chunks.push(c as Buffer);
    throw nodeAnswer(upstream.statusCode ?? 500, Buffer.concat(chunks).toString('utf8').slice(0, 10_000));
  }
  res.writeHead(200, { 'Content-Type': 'text/plain', 'Cache-Control': 'no-cache, private' });
  res.flushHeaders();
  res.on('close', () => upstream.destroy());
  upstream.pipe(res);
  await new Promise<void>((resolve) => {
    upstream.on('end', resolve);
    upstream.on('close', resolve);
  });
}

/** An HTTP answer written on a socket that was not upgraded. */
export function refuseUpgrade(socket: Duplex, e: unknown): void {
  const s = toStatus(e);
  const body = JSON.stringify(s);
  socket.end(
    `HTTP/1.1 ${s.code} ${s.reason ?? ''}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nCache-Control: no-cache, private\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** Whether an upgrade asks for SPDY (kubectl before 1.30, and newer kubectl's fallback). */
export function isSpdyUpgrade(req: IncomingMessage): boolean {
  return (req.headers.upgrade ?? '').toLowerCase().startsWith('spdy/');
}

/** The node endpoint's path for an exec or attach: the command and the stream flags carried over. */
export function nodeStreamPath(
  subresource: 'exec' | 'attach',
  pod: Pod,
  container: string,
  query: URLSearchParams,
): string {
  const q = new URLSearchParams();
  for (const c of query.getAll('command')) q.append('command', c);
  for (const k of ['stdin', 'stdout', 'stderr', 'tty']) if (query.has(k)) q.set(k, query.get(k)!);
  return `/${subresource}/${encodeURIComponent(pod.metadata?.namespace ?? '')}/${encodeURIComponent(pod.metadata?.name ?? '')}/${encodeURIComponent(container)}?${q}`;
}

/**
 * Relays an exec/attach WebSocket upgrade to the pod's node. The checks (container, node) were made
 * before; when the node cannot be reached, the upgrade is completed here and the failure sent as the
 * final Status on channel 3, so kubectl shows it instead of falling back to SPDY.
 */
export function relayPodStream(o: {
  req: IncomingMessage;
  socket: Duplex;
  head: Buffer;
  pod: Pod;
  container: string;
  subresource: 'exec' | 'attach';
  query: URLSearchParams;
  s: PodStreaming;
}): void {
  const { req, socket, head, pod } = o;
  const protocol = chooseChannelProtocol(req.headers['sec-websocket-protocol']);
  const key = req.headers['sec-websocket-key'];
  if ((req.headers.upgrade ?? '').toLowerCase() !== 'websocket' || !key || !protocol) {
    throw badRequest(
      'unable to upgrade: only WebSocket with the v5.channel.k8s.io or v4.channel.k8s.io subprotocol is supported',
    );
  }
  const nodeName = pod.spec?.nodeName;
  if (!nodeName) throw badRequest(`pod ${pod.metadata?.name ?? ''} does not have a host assigned`);
  const failHere = (message: string): void => {
    socket.write(
      `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${acceptKey(key)}\r\nSec-WebSocket-Protocol: ${protocol}\r\n\r\n`,
    );
    const status = { metadata: {}, status: 'Failure', message, reason: 'InternalError', code: 500 };
    socket.write(encodeFrame(OPCODE.binary, channelMessage(STREAM.error, Buffer.from(JSON.stringify(status)))));
    socket.end(encodeFrame(OPCODE.close, closePayload(1000)));
  };
  if (!o.s.cert) return failHere('this API server has no client certificate for node endpoints');
  let target;
  try {
    target = nodeTarget(o.s.node(nodeName), nodeName);
  } catch (e) {
    return failHere((e as Error).message);
  }
  const path = nodeStreamPath(o.subresource, pod, o.container, o.query);
  const upstream = tlsConnect(nodeTlsOptions(target, o.s.cert));
  let connected = false;
  upstream.once('secureConnect', () => {
    connected = true;
    upstream.write(
      [
        `GET ${path} HTTP/1.1`,
        `Host: ${target.host}:${target.port}`,
        'Connection: Upgrade',
        'Upgrade: websocket',
        `Sec-WebSocket-Key: ${key}`,
        `Sec-WebSocket-Version: ${req.headers['sec-websocket-version'] ?? '13'}`,
        `Sec-WebSocket-Protocol: ${req.headers['sec-websocket-protocol'] ?? ''}`,
        '',
        '',
      ].join('\r\n'),
    );
    if (head.length) upstream.write(head);
    upstream.pipe(socket);
    socket.pipe(upstream);
  });
  upstream.on('error', (e) => {
    if (!connected) failHere(`error dialing node ${nodeName} (${target.host}:${target.port}): ${e.message}`);
    else socket.destroy();
  });
  socket.on('error', () => upstream.destroy());
  socket.on('close', () => upstream.destroy());
  upstream.on('close', () => socket.end());
}
