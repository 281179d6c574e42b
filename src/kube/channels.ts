/**
 * The Kubernetes WebSocket channel protocols (`v4.channel.k8s.io`, `v5.channel.k8s.io`): every
 * binary message starts with a stream byte. v5 adds stream 255, "close the stream named by the next
 * byte" — how kubectl half-closes stdin (`kubectl cp` into a pod needs it).
 */
export const STREAM = { stdin: 0, stdout: 1, stderr: 2, error: 3, resize: 4, close: 255 } as const;

export const CHANNEL_PROTOCOLS = ['v5.channel.k8s.io', 'v4.channel.k8s.io'] as const;
export type ChannelProtocol = (typeof CHANNEL_PROTOCOLS)[number];

/** The protocol we speak from a `Sec-WebSocket-Protocol` offer: the newest we share. */
export function chooseChannelProtocol(header: string | undefined): ChannelProtocol | undefined {
  const offered = (header ?? '').split(',').map((s) => s.trim());
  return CHANNEL_PROTOCOLS.find((p) => offered.includes(p));
}

/** One channel message: the stream byte then the data. */
export function channelMessage(stream: number, data: Buffer = Buffer.alloc(0)): Buffer {
  return Buffer.concat([Buffer.from([stream]), data]);
}

export type ChannelEvent =
  | { readonly kind: 'data'; readonly stream: number; readonly data: Buffer }
  | { readonly kind: 'close'; readonly stream: number }
  | { readonly kind: 'empty' };

/** What a received binary message says (v4 has no close signal: 255 is then just a stream). */
export function parseChannelMessage(payload: Buffer, protocol: ChannelProtocol): ChannelEvent {
  if (payload.length === 0) return { kind: 'empty' };
  const stream = payload[0]!;
  if (stream === STREAM.close && protocol === 'v5.channel.k8s.io')
    return payload.length > 1 ? { kind: 'close', stream: payload[1]! } : { kind: 'empty' };
  return { kind: 'data', stream, data: payload.subarray(1) };
}
