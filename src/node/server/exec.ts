/**
 * Exec and attach on the node: the client's WebSocket (v5/v4.channel.k8s.io, relayed by the API
 * server) is joined to the runtime's streaming server over SPDY (remotecommand v4), the way
 * kube-apiserver's stream translator joins WebSocket clients to a kubelet. Channel n ↔ stream of
 * type n; v5's close of stdin becomes a FIN on the stdin stream; the runtime's final Status (exit
 * code as a NonZeroExitCode cause) goes out on channel 3.
 */
import type { Duplex } from 'node:stream';
import { channelMessage, parseChannelMessage, STREAM, type ChannelProtocol } from '../../kube/channels.js';
import type { Logger } from '../../util/log.js';
import { closePayload, encodeFrame, OPCODE, WsDecoder } from '../../util/websocket.js';
import { SpdyConnection, upgradeToSpdy } from '../../util/spdy.js';

export interface StreamOptions {
  readonly stdin: boolean;
  readonly stdout: boolean;
  readonly stderr: boolean;
  readonly tty: boolean;
}

/** Parses `stdin`, `stdout`, `stderr`, `tty` query flags (`true`/`1`); stderr is folded into stdout with a TTY. */
export function streamOptions(q: URLSearchParams): StreamOptions {
  const on = (k: string): boolean => q.get(k) === 'true' || q.get(k) === '1';
  const tty = on('tty');
  return { stdin: on('stdin'), stdout: on('stdout'), stderr: on('stderr') && !tty, tty };
}

/** A Failure Status as the final message of a stream (kubectl prints its message). */
export function failureStatus(message: string): Buffer {
  return Buffer.from(JSON.stringify({ metadata: {}, status: 'Failure', message, reason: 'InternalError', code: 500 }));
}

const SUCCESS = Buffer.from(JSON.stringify({ metadata: {}, status: 'Success' }));
const STREAM_TYPES = ['error', 'stdin', 'stdout', 'stderr', 'resize'] as const;

/** A WebSocket (handshake done) speaking a channel protocol, from our side as the server. */
export class ChannelSocket {
  private closed = false;
  constructor(readonly socket: Duplex) {}
  send(stream: number, data?: Buffer): void {
    if (!this.closed) this.socket.write(encodeFrame(OPCODE.binary, channelMessage(stream, data)));
  }
  /** Sends the final status on the error channel and closes (normal closure). */
  finish(status: Buffer): void {
    if (this.closed) return;
    this.send(STREAM.error, status);
    this.closed = true;
    this.socket.end(encodeFrame(OPCODE.close, closePayload(1000)));
  }
}

/**
 * Joins the client's WebSocket to the runtime's streaming URL until either side ends. Any failure
 * to reach the runtime is reported on channel 3.
 */
export async function bridgeToRuntime(o: {
  ws: Duplex;
  head: Buffer;
  protocol: ChannelProtocol;
  url: string;
  opts: StreamOptions;
  log: Logger;
}): Promise<void> {
  const client = new ChannelSocket(o.ws);
  let up;
  try {
    up = await upgradeToSpdy(o.url, ['v4.channel.k8s.io'], 30_000);
  } catch (e) {
    client.finish(failureStatus(`unable to upgrade connection to the container runtime: ${(e as Error).message}`));
    return;
  }
  const ids = new Map<number, (typeof STREAM_TYPES)[number]>();
  const errorParts: Buffer[] = [];
  let finished = false;
  const finish = (): void => {
    if (finished) return;
    finished = true;
    const err = Buffer.concat(errorParts);
    client.finish(err.length ? err : SUCCESS);
    spdy.close();
  };
  const spdy: SpdyConnection = new SpdyConnection(up.socket, {
    data: (id, data) => {
      const t = ids.get(id);
      if (t === 'error') errorParts.push(data);
      else if (t === 'stdout') client.send(STREAM.stdout, data);
      else if (t === 'stderr') client.send(STREAM.stderr, data);
    },
    end: (id) => {
      if (ids.get(id) === 'error') finish();
    },
    closed: (err) => {
      if (err) o.log.debug('streaming connection ended', { error: err.message });
      finish();
    },
  });
  // The error stream first (the runtime waits for it), then the ones asked for.
  const want: Record<(typeof STREAM_TYPES)[number], boolean> = {
    error: true,
    stdin: o.opts.stdin,
    stdout: o.opts.stdout,
    stderr: o.opts.stderr,
    resize: o.opts.tty,
  };
  const idOf: Partial<Record<(typeof STREAM_TYPES)[number], number>> = {};
  for (const t of STREAM_TYPES) {
    if (!want[t]) continue;
    const id = spdy.openStream({ streamtype: t });
    ids.set(id, t);
    idOf[t] = id;
  }
  const decoder = new WsDecoder();
  const onBytes = (chunk: Buffer): void => {
    let msgs;
    try {
      msgs = decoder.push(chunk);
    } catch {
      finish();
      return;
    }
    for (const m of msgs) {
      if (m.opcode === OPCODE.close) return finish();
      if (m.opcode === OPCODE.ping) o.ws.write(encodeFrame(OPCODE.pong, m.payload));
      if (m.opcode !== OPCODE.binary) continue;
      const ev = parseChannelMessage(m.payload, o.protocol);
      if (ev.kind === 'close' && ev.stream === STREAM.stdin && idOf.stdin !== undefined) spdy.end(idOf.stdin);
      if (ev.kind !== 'data') continue;
      if (ev.stream === STREAM.stdin && idOf.stdin !== undefined) void spdy.write(idOf.stdin, ev.data);
      else if (ev.stream === STREAM.resize && idOf.resize !== undefined) void spdy.write(idOf.resize, ev.data);
    }
  };
  if (o.head.length) onBytes(o.head);
  o.ws.on('data', onBytes);
  o.ws.on('close', finish);
  o.ws.on('error', finish);
}
