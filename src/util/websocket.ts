/**
 * Just enough of WebSocket (RFC 6455) for the Kubernetes streaming channel protocols: the opening
 * handshake's accept key, frame encoding (masked when we are the client) and an incremental
 * decoder that reassembles fragmented messages and answers nothing by itself.
 */
import { createHash } from 'node:crypto';

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

export const OPCODE = { continuation: 0, text: 1, binary: 2, close: 8, ping: 9, pong: 10 } as const;
export type Opcode = (typeof OPCODE)[keyof typeof OPCODE];

/** `Sec-WebSocket-Accept` for a client's `Sec-WebSocket-Key`. */
export function acceptKey(key: string): string {
  return createHash('sha1')
    .update(key + GUID)
    .digest('base64');
}

/** One frame; `mask` when the sender is a client (RFC 6455 §5.3). */
export function encodeFrame(opcode: Opcode, payload: Buffer, mask = false): Buffer {
  const len = payload.length;
  const ext = len < 126 ? 0 : len < 0x10000 ? 2 : 8;
  const head = Buffer.alloc(2 + ext + (mask ? 4 : 0));
  head[0] = 0x80 | opcode;
  head[1] = (mask ? 0x80 : 0) | (ext === 0 ? len : ext === 2 ? 126 : 127);
  if (ext === 2) head.writeUInt16BE(len, 2);
  if (ext === 8) head.writeBigUInt64BE(BigInt(len), 2);
  if (!mask) return Buffer.concat([head, payload]);
  const key = Buffer.from([Math.random() * 256, Math.random() * 256, Math.random() * 256, Math.random() * 256]);
  key.copy(head, 2 + ext);
  const body = Buffer.from(payload);
  for (let i = 0; i < body.length; i++) body[i]! ^= key[i & 3]!;
  return Buffer.concat([head, body]);
}

/** A close frame's payload: the status code and an optional reason. */
export function closePayload(code: number, reason = ''): Buffer {
  const b = Buffer.alloc(2 + Buffer.byteLength(reason));
  b.writeUInt16BE(code, 0);
  b.write(reason, 2);
  return b;
}

/** A complete message (data) or control frame. */
export interface WsMessage {
  readonly opcode: Opcode;
  readonly payload: Buffer;
}

export class WsProtocolError extends Error {}

/** Largest message accepted (kubectl sends stdin in 32 KiB pieces). */
const MAX_MESSAGE_BYTES = 16 << 20;

/** Feeds bytes in, takes whole messages out; control frames come out as they arrive. */
export class WsDecoder {
  private buf: Buffer = Buffer.alloc(0);
  private fragments: Buffer[] = [];
  private fragmentOpcode: Opcode | undefined;

  push(chunk: Buffer): WsMessage[] {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    const out: WsMessage[] = [];
    for (;;) {
      const f = this.next();
      if (!f) return out;
      if (f.opcode >= OPCODE.close) {
        out.push({ opcode: f.opcode, payload: f.payload });
        continue;
      }
      if (f.opcode !== OPCODE.continuation) this.fragmentOpcode = f.opcode;
      else if (this.fragmentOpcode === undefined) throw new WsProtocolError('continuation frame without a message');
      this.fragments.push(f.payload);
      if (f.fin) {
        out.push({ opcode: this.fragmentOpcode!, payload: Buffer.concat(this.fragments) });
        this.fragments = [];
        this.fragmentOpcode = undefined;
      }
    }
  }

  private next(): { fin: boolean; opcode: Opcode; payload: Buffer } | undefined {
    const b = this.buf;
    if (b.length < 2) return undefined;
    const fin = (b[0]! & 0x80) !== 0;
    const opcode = (b[0]! & 0x0f) as Opcode;
    const masked = (b[1]! & 0x80) !== 0;
    let len = b[1]! & 0x7f;
    let off = 2;
    if (len === 126) {
      if (b.length < 4) return undefined;
      len = b.readUInt16BE(2);
      off = 4;
    } else if (len === 127) {
      if (b.length < 10) return undefined;
      const big = b.readBigUInt64BE(2);
      if (big > BigInt(MAX_MESSAGE_BYTES)) throw new WsProtocolError('frame too large');
      len = Number(big);
      off = 10;
    }
    if (len > MAX_MESSAGE_BYTES) throw new WsProtocolError('frame too large');
    const keyOff = off;
    if (masked) off += 4;
    if (b.length < off + len) return undefined;
    const payload = Buffer.from(b.subarray(off, off + len));
    if (masked) for (let i = 0; i < len; i++) payload[i]! ^= b[keyOff + (i & 3)]!;
    this.buf = b.subarray(off + len);
    return { fin, opcode, payload };
  }
}
