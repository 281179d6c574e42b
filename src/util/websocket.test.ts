import { describe, expect, it } from 'vitest';
import { channelMessage, chooseChannelProtocol, parseChannelMessage, STREAM } from '../kube/channels.js';
import { acceptKey, closePayload, encodeFrame, OPCODE, WsDecoder, WsProtocolError } from './websocket.js';

describe('WebSocket framing', () => {
  it('computes the RFC 6455 accept key', () =>
    expect(acceptKey('dGhlIHNhbXBsZSBub25jZQ==')).toBe('s3pPLMBiTxaQ9kYGzzhZRbK+xOo='));

  it.each([0, 125, 126, 65535, 65536])('round-trips a %i-byte message, masked and not', (n) => {
    const payload = Buffer.alloc(n, 7);
    for (const mask of [false, true]) {
      const frame = encodeFrame(OPCODE.binary, payload, mask);
      expect((frame[1]! & 0x80) !== 0).toBe(mask);
      expect(new WsDecoder().push(frame)).toEqual([{ opcode: OPCODE.binary, payload }]);
    }
  });

  it('decodes frames split anywhere and joins fragments; control frames pass between them', () => {
    const first = encodeFrame(OPCODE.binary, Buffer.from('ab'), true);
    first[0] = first[0]! & 0x7f; // not FIN
    const ping = encodeFrame(OPCODE.ping, Buffer.from('p'), true);
    const last = encodeFrame(OPCODE.continuation, Buffer.from('cd'), true);
    const all = Buffer.concat([first, ping, last]);
    const d = new WsDecoder();
    const out = [...all].flatMap((b) => d.push(Buffer.from([b])));
    expect(out).toEqual([
      { opcode: OPCODE.ping, payload: Buffer.from('p') },
      { opcode: OPCODE.binary, payload: Buffer.from('abcd') },
    ]);
  });

  it('refuses a continuation without a message', () => {
    expect(() => new WsDecoder().push(encodeFrame(OPCODE.continuation, Buffer.from('x')))).toThrow(WsProtocolError);
  });

  it('encodes a close status', () =>
    expect(closePayload(1000, 'bye')).toEqual(Buffer.from([0x03, 0xe8, ...Buffer.from('bye')])));
});

describe('Kubernetes channel protocols', () => {
  it.each([
    ['v5.channel.k8s.io, v4.channel.k8s.io, v3.channel.k8s.io', 'v5.channel.k8s.io'],
    ['v4.channel.k8s.io,channel.k8s.io', 'v4.channel.k8s.io'],
    ['channel.k8s.io', undefined],
    [undefined, undefined],
  ])('offer %j → %j', (offer, want) => expect(chooseChannelProtocol(offer)).toBe(want));

  it('prefixes the stream byte', () =>
    expect(channelMessage(STREAM.stderr, Buffer.from('x'))).toEqual(Buffer.from([2, 0x78])));

  it('reads v5 close signals; v4 has none', () => {
    const closeStdin = Buffer.from([STREAM.close, STREAM.stdin]);
    expect(parseChannelMessage(closeStdin, 'v5.channel.k8s.io')).toEqual({ kind: 'close', stream: STREAM.stdin });
    expect(parseChannelMessage(closeStdin, 'v4.channel.k8s.io')).toEqual({
      kind: 'data',
      stream: 255,
      data: Buffer.from([0]),
    });
    expect(parseChannelMessage(Buffer.from([STREAM.resize, 0x7b]), 'v5.channel.k8s.io')).toEqual({
      kind: 'data',
      stream: STREAM.resize,
      data: Buffer.from('{'),
    });
    expect(parseChannelMessage(Buffer.alloc(0), 'v5.channel.k8s.io')).toEqual({ kind: 'empty' });
  });
});
