/**
 * SPDY/3.1 as the Kubernetes streaming protocols use it (remotecommand over SPDY): one stream per
 * `streamtype`, data frames, FIN to half-close. As a client (the node towards a CRI runtime's
 * streaming server, which only lets a client half-close stdin over SPDY) we open the streams; as a
 * server (the API server towards kubectl before 1.30) the peer opens them in client-go's fixed
 * order. Header blocks travel in one zlib stream per direction; we never read the peer's (their
 * meaning follows from the streams' order), so no shared dictionary is needed: a zlib stream
 * without the dictionary flag is valid for the receiver.
 */
import { request } from 'node:http';
import type { Duplex } from 'node:stream';

const VERSION = 3;
const TYPE = {
  synStream: 1,
  synReply: 2,
  rstStream: 3,
  settings: 4,
  ping: 6,
  goaway: 7,
  headers: 8,
  windowUpdate: 9,
} as const;
const FLAG_FIN = 0x01;
const MAX_DATA = 32 * 1024;

/** Events of a connection's streams. */
export interface SpdyHandlers {
  /** The peer opened a stream (SYN_STREAM); a server has already replied. */
  opened?(streamId: number): void;
  data(streamId: number, data: Buffer): void;
  /** The peer half-closed (FIN) or reset the stream. */
  end(streamId: number): void;
  /** The connection ended (cleanly or not). */
  closed(err?: Error): void;
}

/** A SPDY connection on an upgraded socket. A client opens odd-numbered streams; a server answers the peer's. */
export class SpdyConnection {
  private nextId: number;
  private zlibStarted = false;
  private buf: Buffer = Buffer.alloc(0);
  private done = false;

  constructor(
    private readonly socket: Duplex,
    private readonly h: SpdyHandlers,
    private readonly role: 'client' | 'server' = 'client',
  ) {
    this.nextId = role === 'client' ? 1 : 2;
    socket.on('data', (c: Buffer) => this.onData(c));
    socket.on('close', () => this.finish());
    socket.on('error', (e: Error) => this.finish(e));
  }

  /** Opens a stream carrying `headers` (names lower-case); returns its id. */
  openStream(headers: Readonly<Record<string, string>>): number {
    const id = this.nextId;
    this.nextId += 2;
    const body = Buffer.alloc(10);
    body.writeUInt32BE(id, 0);
    body.writeUInt32BE(0, 4); // associated stream
    body[8] = 0; // priority
    body[9] = 0; // slot
    this.socket.write(controlFrame(TYPE.synStream, 0, Buffer.concat([body, this.compress(headerBlock(headers))])));
    return id;
  }

  /** Sends data on a stream (after its SYN_STREAM, which openStream orders before). */
  async write(id: number, data: Buffer): Promise<void> {
    for (let off = 0; off < data.length; off += MAX_DATA) {
      const piece = data.subarray(off, off + MAX_DATA);
      if (!this.socket.write(dataFrame(id, 0, piece)))
        await new Promise<void>((r) => this.socket.once('drain', () => r()));
    }
  }

  /** Half-closes a stream from this side (FIN). */
  end(id: number): void {
    this.socket.write(dataFrame(id, FLAG_FIN, Buffer.alloc(0)));
  }

  private reply(id: number): void {
    const body = Buffer.alloc(4);
    body.writeUInt32BE(id, 0);
    this.socket.write(controlFrame(TYPE.synReply, 0, Buffer.concat([body, this.compress(headerBlock({}))])));
  }

  close(): void {
    this.socket.destroy();
    this.finish();
  }

  /**
   * The next piece of this connection's one zlib stream: stored (uncompressed) deflate blocks, so
   * the receiver can parse each header block as it arrives. The zlib header goes before the first.
   */
  private compress(raw: Buffer): Buffer {
    const parts: Buffer[] = [];
    if (!this.zlibStarted) parts.push(Buffer.from([0x78, 0x01]));
    this.zlibStarted = true;
    for (let off = 0; off < raw.length; off += 0xffff) parts.push(storedBlock(raw.subarray(off, off + 0xffff)));
    // An empty stored block ends each piece, as a sync flush does: a reader hands out what it has
    // decoded when it meets one (Go's flate does not before).
    parts.push(storedBlock(Buffer.alloc(0)));
    return Buffer.concat(parts);
  }

  private onData(chunk: Buffer): void {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    while (this.buf.length >= 8) {
      const len = this.buf.readUIntBE(5, 3);
      if (this.buf.length < 8 + len) return;
      const head = this.buf.subarray(0, 8);
      const payload = this.buf.subarray(8, 8 + len);
      this.buf = this.buf.subarray(8 + len);
      const flags = head[4]!;
      if ((head[0]! & 0x80) === 0) {
        const id = head.readUInt32BE(0) & 0x7fffffff;
        if (payload.length) this.h.data(id, Buffer.from(payload));
        if (flags & FLAG_FIN) this.h.end(id);
        continue;
      }
      const type = head.readUInt16BE(2);
      if (type === TYPE.synStream) {
        const id = payload.readUInt32BE(0) & 0x7fffffff;
        if (this.role === 'server') this.reply(id);
        this.h.opened?.(id);
        if (flags & FLAG_FIN) this.h.end(id);
      } else if (type === TYPE.synReply && flags & FLAG_FIN) this.h.end(payload.readUInt32BE(0) & 0x7fffffff);
      else if (type === TYPE.rstStream) this.h.end(payload.readUInt32BE(0) & 0x7fffffff);
      else if (type === TYPE.ping) this.socket.write(controlFrame(TYPE.ping, 0, Buffer.from(payload)));
      else if (type === TYPE.goaway) this.close();
      // SYN_REPLY and HEADERS carry nothing we act on; SETTINGS and WINDOW_UPDATE: the peer does no flow control.
    }
  }

  private finish(err?: Error): void {
    if (this.done) return;
    this.done = true;
    this.h.closed(err);
  }
}

/** A deflate stored block (BFINAL 0, BTYPE 00), byte-aligned: LEN, NLEN, the bytes. */
function storedBlock(data: Buffer): Buffer {
  const h = Buffer.alloc(5);
  h.writeUInt16LE(data.length, 1);
  h.writeUInt16LE(~data.length & 0xffff, 3);
  return Buffer.concat([h, data]);
}

function controlFrame(type: number, flags: number, payload: Buffer): Buffer {
  const h = Buffer.alloc(8);
  h.writeUInt16BE(0x8000 | VERSION, 0);
  h.writeUInt16BE(type, 2);
  h[4] = flags;
  h.writeUIntBE(payload.length, 5, 3);
  return Buffer.concat([h, payload]);
}

function dataFrame(id: number, flags: number, payload: Buffer): Buffer {
  const h = Buffer.alloc(8);
  h.writeUInt32BE(id & 0x7fffffff, 0);
  h[4] = flags;
  h.writeUIntBE(payload.length, 5, 3);
  return Buffer.concat([h, payload]);
}

/** SPDY/3 name/value block, uncompressed: counts and lengths as 32-bit big-endian. */
export function headerBlock(headers: Readonly<Record<string, string>>): Buffer {
  const parts: Buffer[] = [];
  const n = Buffer.alloc(4);
  n.writeUInt32BE(Object.keys(headers).length);
  parts.push(n);
  for (const [k, v] of Object.entries(headers)) {
    for (const s of [k.toLowerCase(), v]) {
      const b = Buffer.from(s);
      const l = Buffer.alloc(4);
      l.writeUInt32BE(b.length);
      parts.push(l, b);
    }
  }
  return Buffer.concat(parts);
}

/** What the streaming server agreed to. */
export interface SpdyUpgrade {
  readonly socket: Duplex;
  readonly protocol: string;
}

/** Thrown when the server answers the upgrade with something else than 101 (its body is the reason). */
export class UpgradeRefused extends Error {
  constructor(
    readonly statusCode: number,
    readonly body: string,
  ) {
    super(`upgrade refused (${statusCode}): ${body}`);
  }
}

/**
 * Upgrades an HTTP connection to `url` to SPDY/3.1, offering `protocols` (X-Stream-Protocol-Version)
 * in order of preference.
 */
export function upgradeToSpdy(url: string, protocols: readonly string[], timeoutMs: number): Promise<SpdyUpgrade> {
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: 'POST',
      headers: {
        Connection: 'Upgrade',
        Upgrade: 'SPDY/3.1',
        'X-Stream-Protocol-Version': [...protocols],
        'Content-Length': '0',
      },
      timeout: timeoutMs,
    });
    req.on('upgrade', (res, socket, head) => {
      socket.setTimeout(0);
      if (head.length) socket.unshift(head);
      resolve({ socket, protocol: String(res.headers['x-stream-protocol-version'] ?? '') });
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => reject(new UpgradeRefused(res.statusCode ?? 0, Buffer.concat(chunks).toString().trim())));
    });
    req.on('timeout', () => req.destroy(new Error(`streaming server did not answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });
}
