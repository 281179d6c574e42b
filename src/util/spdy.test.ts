import { Duplex } from 'node:stream';
import { constants, inflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { headerBlock, SpdyConnection } from './spdy.js';

/** A socket whose writes are collected and whose reads are what the test pushes. */
function fakeSocket(): { socket: Duplex; written: Buffer[] } {
  const written: Buffer[] = [];
  const socket = new Duplex({
    write(chunk: Buffer, _enc, cb) {
      written.push(chunk);
      cb();
    },
    read() {},
  });
  return { socket, written };
}

const frameHead = (b: Buffer): { control: boolean; type: number; flags: number; length: number } => ({
  control: (b[0]! & 0x80) !== 0,
  type: b.readUInt16BE(2),
  flags: b[4]!,
  length: b.readUIntBE(5, 3),
});

describe('SPDY/3.1 client framing', () => {
  it('opens odd-numbered streams whose header blocks are one zlib stream a reader decodes block by block', () => {
    const { socket, written } = fakeSocket();
    const c = new SpdyConnection(socket, { data: () => undefined, end: () => undefined, closed: () => undefined });
    expect([c.openStream({ streamtype: 'error' }), c.openStream({ streamtype: 'stdout' })]).toEqual([1, 3]);
    const blocks = written.map((f) => {
      expect(frameHead(f)).toMatchObject({ control: true, type: 1, length: f.length - 8 });
      return f.subarray(8 + 10);
    });
    expect(written[1]!.readUInt32BE(8)).toBe(3);
    const inflated = inflateSync(Buffer.concat(blocks), { finishFlush: constants.Z_SYNC_FLUSH });
    expect(inflated).toEqual(
      Buffer.concat([headerBlock({ streamtype: 'error' }), headerBlock({ streamtype: 'stdout' })]),
    );
    c.close();
  });

  it('writes data and a FIN; reads data frames, FIN and RST per stream, and answers pings', () => {
    const { socket, written } = fakeSocket();
    const events: string[] = [];
    const c = new SpdyConnection(socket, {
      data: (id, d) => events.push(`data ${id} ${d.toString()}`),
      end: (id) => events.push(`end ${id}`),
      closed: () => events.push('closed'),
    });
    void c.write(5, Buffer.from('in'));
    c.end(5);
    expect(written.map((f) => ({ id: f.readUInt32BE(0), flags: f[4], body: f.subarray(8).toString() }))).toEqual([
      { id: 5, flags: 0, body: 'in' },
      { id: 5, flags: 1, body: '' },
    ]);
    const data = (id: number, flags: number, body: string): Buffer => {
      const h = Buffer.alloc(8);
      h.writeUInt32BE(id);
      h[4] = flags;
      h.writeUIntBE(body.length, 5, 3);
      return Buffer.concat([h, Buffer.from(body)]);
    };
    const control = (type: number, payload: Buffer): Buffer => {
      const h = Buffer.from([0x80, 3, 0, type, 0, 0, 0, 0]);
      h.writeUIntBE(payload.length, 5, 3);
      return Buffer.concat([h, payload]);
    };
    const all = Buffer.concat([
      data(3, 0, 'out'),
      data(3, 1, ''),
      control(3, Buffer.from([0, 0, 0, 1, 0, 0, 0, 5])),
      control(6, Buffer.from([0, 0, 0, 2])),
    ]);
    // Split mid-frame: the reader must wait for the rest.
    socket.push(all.subarray(0, 5));
    socket.push(all.subarray(5));
    return new Promise<void>((resolve) =>
      setImmediate(() => {
        expect(events).toEqual(['data 3 out', 'end 3', 'end 1']);
        expect(frameHead(written.at(-1)!)).toMatchObject({ control: true, type: 6 });
        c.close();
        expect(events.at(-1)).toBe('closed');
        resolve();
      }),
    );
  });
});

describe('SPDY/3.1 server side', () => {
  it("replies to the peer's streams and reports them in order", () => {
    const { socket, written } = fakeSocket();
    const opened: number[] = [];
    const c = new SpdyConnection(
      socket,
      { opened: (id) => opened.push(id), data: () => undefined, end: () => undefined, closed: () => undefined },
      'server',
    );
    const syn = (id: number): Buffer => {
      const body = Buffer.alloc(10);
      body.writeUInt32BE(id);
      const h = Buffer.from([0x80, 3, 0, 1, 0, 0, 0, 0]);
      h.writeUIntBE(body.length, 5, 3);
      return Buffer.concat([h, body]);
    };
    socket.push(Buffer.concat([syn(1), syn(3)]));
    return new Promise<void>((resolve) =>
      setImmediate(() => {
        expect(opened).toEqual([1, 3]);
        expect(written.map((f) => ({ ...frameHead(f), id: f.readUInt32BE(8) }))).toMatchObject([
          { control: true, type: 2, id: 1 },
          { control: true, type: 2, id: 3 },
        ]);
        c.close();
        resolve();
      }),
    );
  });
});
