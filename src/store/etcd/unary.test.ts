import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { mayRetry, UnaryCallError, UnaryChannel } from './unary.js';

const UNAVAILABLE = 14;
const DEADLINE_EXCEEDED = 4;

/** A gRPC server over h2c that answers each call with the next of `answers`: a status, or a reply body. */
async function fakeEtcd(
  answers: Array<{ status: number; message?: string } | { reply: Buffer }>,
): Promise<{ origin: string; calls: () => number; close(): Promise<void> }> {
  let calls = 0;
  const server = http2.createServer();
  server.on('stream', (stream) => {
    const a = answers[Math.min(calls++, answers.length - 1)]!;
    stream.on('data', () => undefined);
    stream.on('end', () => {
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.on('wantTrailers', () =>
        stream.sendTrailers(
          'reply' in a
            ? { 'grpc-status': '0' }
            : { 'grpc-status': String(a.status), 'grpc-message': encodeURIComponent(a.message ?? '') },
        ),
      );
      if ('reply' in a) {
        const frame = Buffer.alloc(5 + a.reply.length);
        frame.writeUInt32BE(a.reply.length, 1);
        a.reply.copy(frame, 5);
        stream.end(frame);
      } else stream.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls: () => calls,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

describe('UnaryChannel retries (etcd clientv3 rules)', () => {
  const cleanup: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const f of cleanup.splice(0)) await f();
  });

  it('a read answered "leader changed" is sent again and gets the reply once a leader is elected', async () => {
    const etcd = await fakeEtcd([
      { status: UNAVAILABLE, message: 'etcdserver: leader changed' },
      { status: UNAVAILABLE, message: 'etcdserver: no leader' },
      { reply: Buffer.from('kvs') },
    ]);
    const ch = new UnaryChannel([etcd.origin], undefined);
    cleanup.push(
      () => ch.close(),
      () => etcd.close(),
    );
    expect((await ch.call('/etcdserverpb.KV/Range', Buffer.from('q'), 5_000, { repeatable: true })).toString()).toBe(
      'kvs',
    );
    expect(etcd.calls()).toBe(3);
  });

  it('a write answered Unavailable is not sent again: etcd may have applied it', async () => {
    const etcd = await fakeEtcd([
      { status: UNAVAILABLE, message: 'etcdserver: leader changed' },
      { reply: Buffer.from('ok') },
    ]);
    const ch = new UnaryChannel([etcd.origin], undefined);
    cleanup.push(
      () => ch.close(),
      () => etcd.close(),
    );
    await expect(ch.call('/etcdserverpb.KV/Txn', Buffer.from('q'), 5_000)).rejects.toMatchObject({
      code: UNAVAILABLE,
      details: 'etcdserver: leader changed',
    });
    expect(etcd.calls()).toBe(1);
  });

  it('a read is sent again until its deadline, then fails', async () => {
    const etcd = await fakeEtcd([{ status: UNAVAILABLE, message: 'etcdserver: no leader' }]);
    const ch = new UnaryChannel([etcd.origin], undefined);
    cleanup.push(
      () => ch.close(),
      () => etcd.close(),
    );
    // etcd's last answer, or the deadline if it passed while a call was out.
    const err: unknown = await ch
      .call('/etcdserverpb.KV/Range', Buffer.from('q'), 300, { repeatable: true })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnaryCallError);
    expect([UNAVAILABLE, DEADLINE_EXCEEDED]).toContain((err as UnaryCallError).code);
    expect(etcd.calls()).toBeGreaterThan(1);
  });

  it('mayRetry: only Unavailable; a read always, a write only when never sent', () => {
    const unavailable = new UnaryCallError(UNAVAILABLE, 'etcdserver: leader changed');
    expect(mayRetry(unavailable, true, true)).toBe(true);
    expect(mayRetry(unavailable, false, false)).toBe(true);
    expect(mayRetry(unavailable, true, false)).toBe(false);
    expect(mayRetry(new UnaryCallError(9, 'etcdserver: mvcc: required revision has been compacted'), true, true)).toBe(
      false,
    );
    expect(mayRetry(new Error('other'), false, true)).toBe(false);
  });
});
