/**
 * exec and attach for kubectl before 1.30, which speaks only SPDY: the API server takes the SPDY
 * side itself (remotecommand v4) and joins it to the node's WebSocket (v5), as kube-apiserver's
 * stream translator does the other way round. client-go opens its streams in a fixed order — error,
 * then stdin, stdout, stderr (without a TTY) and resize (with one), each when asked for — so the
 * streams are named by their order and their header blocks need not be read.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { randomBytes } from 'node:crypto';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { channelMessage, STREAM } from '../../kube/channels.js';
import { SpdyConnection } from '../../util/spdy.js';
import { acceptKey, encodeFrame, OPCODE, WsDecoder } from '../../util/websocket.js';
import { nodeTarget, nodeTlsOptions } from '../nodeconn.js';
import { badRequest } from '../status.js';
import type { PodStreaming } from './podstream.js';

const V4 = 'v4.channel.k8s.io';
type StreamType = 'error' | 'stdin' | 'stdout' | 'stderr' | 'resize';

/** The streams client-go opens, in its order, for the asked flags. */
export function expectedStreams(q: URLSearchParams): StreamType[] {
  const on = (k: string): boolean => q.get(k) === 'true' || q.get(k) === '1';
  const tty = on('tty');
  const out: StreamType[] = ['error'];
  if (on('stdin')) out.push('stdin');
  if (on('stdout')) out.push('stdout');
  if (on('stderr') && !tty) out.push('stderr');
  if (tty) out.push('resize');
  return out;
}

/** A WebSocket (v5) to the node's endpoint at `path`, handshake done; bytes after the 101 in `rest`. */
function dialNode(o: {
  s: PodStreaming;
  nodeName: string;
  path: string;
}): Promise<{ socket: TLSSocket; rest: Buffer }> {
  const target = nodeTarget(o.s.node(o.nodeName), o.nodeName);
  const key = randomBytes(16).toString('base64');
  return new Promise((resolve, reject) => {
    const socket = tlsConnect(nodeTlsOptions(target, o.s.cert!));
    let head = Buffer.alloc(0);
    const onData = (d: Buffer): void => {
      head = Buffer.concat([head, d]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      socket.off('data', onData);
      const status = head.subarray(0, end).toString();
      if (!status.startsWith('HTTP/1.1 101') || !status.includes(acceptKey(key))) {
        socket.destroy();
        return reject(
          new Error(
            `node ${o.nodeName} refused the stream: ${head.toString().split('\r\n\r\n')[1]?.trim() || status.split('\r\n')[0]}`,
          ),
        );
      }
      resolve({ socket, rest: head.subarray(end + 4) });
    };
    socket.once('secureConnect', () => {
      socket.write(
        `GET ${o.path} HTTP/1.1\r\nHost: ${target.host}:${target.port}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Protocol: v5.channel.k8s.io\r\n\r\n`,
      );
      socket.on('data', onData);
    });
    socket.once('error', (e) =>
      reject(new Error(`error dialing node ${o.nodeName} (${target.host}:${target.port}): ${e.message}`)),
    );
  });
}

/** Serves a SPDY exec/attach upgrade (checks done) by joining it to the node's WebSocket. */
export function relaySpdyPodStream(o: {
  req: IncomingMessage;
  socket: Duplex;
  head: Buffer;
  pod: Pod;
  path: string;
  query: URLSearchParams;
  s: PodStreaming;
}): void {
  const offered = String(o.req.headers['x-stream-protocol-version'] ?? '')
    .split(',')
    .map((p) => p.trim());
  if (!offered.includes(V4)) throw badRequest(`unable to upgrade: only the ${V4} protocol is served over SPDY`);
  const nodeName = o.pod.spec?.nodeName;
  if (!nodeName) throw badRequest(`pod ${o.pod.metadata?.name ?? ''} does not have a host assigned`);
  o.socket.write(
    `HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: ${V4}\r\n\r\n`,
  );
  if (o.head.length) o.socket.unshift(o.head);

  const want = expectedStreams(o.query);
  const ids = new Map<StreamType, number>();
  const types = new Map<number, StreamType>();
  const pending: Buffer[] = []; // channel messages for the node before it is connected
  let node: TLSSocket | undefined;
  let finished = false;
  const toNode = (m: Buffer): void => {
    if (node) node.write(encodeFrame(OPCODE.binary, m, true));
    else pending.push(m);
  };
  const finish = (errorStatus?: Buffer): void => {
    if (finished) return;
    finished = true;
    const err = ids.get('error');
    if (err !== undefined && errorStatus) void spdy.write(err, errorStatus);
    for (const id of ids.values()) spdy.end(id);
    node?.destroy();
    o.socket.end();
  };
  const spdy = new SpdyConnection(
    o.socket,
    {
      opened: (id) => {
        const t = want[ids.size];
        if (!t) return;
        ids.set(t, id);
        types.set(id, t);
        if (ids.size === want.length) void connect();
      },
      data: (id, data) => {
        const t = types.get(id);
        if (t === 'stdin') toNode(channelMessage(STREAM.stdin, data));
        else if (t === 'resize') toNode(channelMessage(STREAM.resize, data));
      },
      end: (id) => {
        if (types.get(id) === 'stdin') toNode(Buffer.from([STREAM.close, STREAM.stdin]));
      },
      closed: () => {
        finished = true;
        node?.destroy();
      },
    },
    'server',
  );

  const connect = async (): Promise<void> => {
    let conn;
    try {
      conn = await dialNode({ s: o.s, nodeName, path: o.path });
    } catch (e) {
      const status = {
        metadata: {},
        status: 'Failure',
        message: (e as Error).message,
        reason: 'InternalError',
        code: 500,
      };
      return finish(Buffer.from(JSON.stringify(status)));
    }
    node = conn.socket;
    for (const m of pending.splice(0)) node.write(encodeFrame(OPCODE.binary, m, true));
    const decoder = new WsDecoder();
    const onBytes = (chunk: Buffer): void => {
      for (const m of decoder.push(chunk)) {
        if (m.opcode === OPCODE.close) return finish();
        if (m.opcode !== OPCODE.binary || m.payload.length === 0) continue;
        const stream = m.payload[0]!;
        const data = m.payload.subarray(1);
        const target =
          stream === STREAM.stdout ? ids.get('stdout') : stream === STREAM.stderr ? ids.get('stderr') : undefined;
        if (target !== undefined) void spdy.write(target, data);
        if (stream === STREAM.error) return finish(data);
      }
    };
    if (conn.rest.length) onBytes(conn.rest);
    node.on('data', onBytes);
    node.on('close', () => finish());
    node.on('error', () => finish());
  };
}
