/**
 * Misbehaving connections: bodies refused before they are read, huge headers, slow-loris clients,
 * a burst past the in-flight limit, request deadlines — then ordinary traffic on the same
 * connections. kube-apiserver is the model (Go net/http + its filters): 413/401/415 never wedge a
 * keep-alive connection, `--max-(mutating-)requests-inflight` answer 429 with `Retry-After: 1` and
 * leave watches and system:masters alone, `timeout=` ends a request with 504.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  expectReady,
  oneConnection,
  rawConnection,
  send,
  snapshot,
  startHostileServer,
  type HostileServer,
} from './kit.js';

const PVS = '/api/v1/persistentvolumes';
const pv = (name: string) => ({
  apiVersion: 'v1',
  kind: 'PersistentVolume',
  metadata: { name },
  spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: `/tmp/${name}` } },
});

describe('hostile connections', () => {
  let s: HostileServer;
  /** Slow clients are cut within the test: short read deadlines (only slow-client tests use it). */
  let slow: HostileServer;
  beforeAll(async () => {
    // In-flight limits small enough to reach with a few held requests; kube's read deadlines.
    s = await startHostileServer({ maxMutatingRequestsInFlight: 2, maxRequestsInFlight: 4 });
    slow = await startHostileServer({ headerTimeoutMs: 1_000, requestReadTimeoutMs: 2_000 });
  });
  afterAll(async () => {
    await s?.close();
    await slow?.close();
  });

  it('a 4 MiB body refused with 413 does not stall the next request from the same keep-alive client', async () => {
    const agent = oneConnection(s);
    const before = await snapshot(s, PVS);
    const big = Buffer.alloc(4 * 1024 * 1024, 0x20);
    const r = await send(s, 'POST', PVS, big, { agent });
    expect(r.status).toBe(413);
    expect(r.body).toMatchObject({
      kind: 'Status',
      code: 413,
      reason: 'RequestEntityTooLarge',
      message: 'Request entity too large: limit is 3145728',
    });
    expect(r.headers.connection).toBe('close');
    const next = await send(s, 'GET', PVS, undefined, { agent });
    expect(next.status).toBe(200);
    expect(await snapshot(s, PVS)).toEqual(before);
    await expectReady(s);
    agent.destroy();
  });

  it(
    'the reported hang: Node fetch (keep-alive pool) after a 413 still gets its next answer',
    { timeout: 30_000 },
    async () => {
      // fetch only trusts a private CA given at process start: run the client as a child process.
      const script = `
      const url = process.argv[1], token = process.argv[2];
      const h = { Authorization: 'Bearer ' + token, 'Content-Type': 'application/json' };
      const big = await fetch(url + '${PVS}', { method: 'POST', headers: h, body: ' '.repeat(4 * 1024 * 1024) });
      await big.text();
      // The next request comes later, as in the report: by then the pool holds the connection
      // idle and reuses it (a request sent at once would take a fresh one). Scenario, not a wait.
      await new Promise((r) => setTimeout(r, 200));
      const next = await fetch(url + '${PVS}', { headers: h });
      await next.text();
      console.log(JSON.stringify([big.status, next.status]));`;
      // kube's default limits: no short read deadline comes to the rescue of a wedged connection.
      const plain = await startHostileServer();
      try {
        const { stdout } = await promisify(execFile)(
          process.execPath,
          ['--input-type=module', '-e', script, plain.api.url, plain.adminToken],
          {
            env: { ...process.env, NODE_EXTRA_CA_CERTS: plain.caFile },
            timeout: 20_000, // a wedged client must not outlive the test
          },
        );
        expect(JSON.parse(stdout.trim())).toEqual([413, 200]);
      } finally {
        await plain.close();
      }
    },
  );

  it('a 401 before the body is read: a small body is drained and the connection reused, a large one closes it', async () => {
    const agent = oneConnection(s);
    const small = await send(s, 'POST', PVS, pv('unauth-small'), { agent, token: null });
    expect(small.status).toBe(401);
    const again = await send(s, 'GET', PVS, undefined, { agent });
    expect(again.status).toBe(200);
    expect(again.localPort).toBe(small.localPort);

    const large = await send(s, 'POST', PVS, Buffer.alloc(1024 * 1024, 0x20), { agent, token: 'wrong' });
    expect(large.status).toBe(401);
    expect(large.headers.connection).toBe('close');
    const after = await send(s, 'GET', PVS, undefined, { agent });
    expect(after.status).toBe(200);
    expect((await send(s, 'GET', `${PVS}/unauth-small`)).status).toBe(404);
    agent.destroy();
  });

  it('headers larger than the limit get 431 and the connection is closed; the server stays ready', async () => {
    const c = await rawConnection(s);
    c.write(`GET /readyz HTTP/1.1\r\nHost: x\r\nX-Huge: ${'a'.repeat(2 * 1024 * 1024)}\r\n\r\n`);
    await c.closed;
    expect(c.text()).toMatch(/^HTTP\/1\.1 431 /);
    await expectReady(s);
  });

  it('a slow-loris client that never finishes its headers is disconnected', async () => {
    const c = await rawConnection(slow);
    c.write('GET /readyz HTTP/1.1\r\nHost: x\r\n');
    await c.closed;
    expect(c.text()).not.toContain('200 OK');
    await expectReady(slow);
  });

  it('a client that never finishes its body is disconnected, nothing is written, and watches outlive the read deadline', async () => {
    const watch = await rawConnection(slow);
    watch.write(`GET ${PVS}?watch=true HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${slow.adminToken}\r\n\r\n`);
    await watch.until((t) => t.includes('\r\n\r\n'));
    expect(watch.text()).toMatch(/^HTTP\/1\.1 200 /);

    const before = await snapshot(slow, PVS);
    const halfSent = await rawConnection(slow);
    const body = JSON.stringify(pv('slow-body'));
    halfSent.write(
      `POST ${PVS} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${slow.adminToken}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`,
    );
    await halfSent.closed; // the read deadline passed: the watch opened before it is past its own too
    expect(await snapshot(slow, PVS)).toEqual(before);

    const created = await send(slow, 'POST', PVS, pv('after-slow-body'));
    expect(created.status).toBe(201);
    await watch.until((t) => t.includes('"after-slow-body"'));
    expect(watch.socket.destroyed).toBe(false);
    watch.destroy();
    await expectReady(slow);
  });

  it('a burst past --max-mutating-requests-inflight gets 429 with Retry-After; masters and watches pass; the slots come back', async () => {
    // Two mutating requests held open: their bodies never finish.
    const body = JSON.stringify(pv('held'));
    const held = await Promise.all([0, 1].map(() => rawConnection(s)));
    for (const h of held)
      h.write(
        `POST ${PVS} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${s.userToken}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n{`,
      );
    const agent = oneConnection(s);
    let refused = await send(s, 'POST', PVS, pv('burst'), { agent, token: s.userToken });
    // The held requests are admitted as their headers arrive; ask until both are in.
    while (refused.status !== 429) {
      expect(refused.status).toBe(201);
      await send(s, 'DELETE', `${PVS}/burst`);
      refused = await send(s, 'POST', PVS, pv('burst'), { agent, token: s.userToken });
    }
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.body).toMatchObject({
      kind: 'Status',
      code: 429,
      reason: 'TooManyRequests',
      details: { retryAfterSeconds: 1 },
    });
    expect((await send(s, 'GET', `${PVS}/burst`)).status).toBe(404);

    // Read-only requests have their own budget; system:masters is never refused; watches are not counted.
    expect((await send(s, 'GET', PVS, undefined, { agent, token: s.userToken })).status).toBe(200);
    const admin = await send(s, 'POST', PVS, pv('admin-in-burst'));
    expect(admin.status).toBe(201);
    const w = await rawConnection(s);
    w.write(`GET ${PVS}?watch=true HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${s.userToken}\r\n\r\n`);
    await w.until((t) => t.includes('\r\n\r\n'));
    expect(w.text()).toMatch(/^HTTP\/1\.1 200 /);
    w.destroy();
    await expectReady(s);

    // The refused request's connection carries the next request once the slots are free.
    for (const h of held) h.destroy();
    await Promise.all(held.map((h) => h.closed));
    let ok = await send(s, 'POST', PVS, pv('burst'), { agent, token: s.userToken });
    while (ok.status === 429) ok = await send(s, 'POST', PVS, pv('burst'), { agent, token: s.userToken });
    expect(ok.status).toBe(201);
    expect(ok.localPort).toBe(refused.localPort);
    agent.destroy();
  });

  it('timeout= that does not parse is a 400; a request past its timeout= gets 504 Timeout', async () => {
    const bad = await send(s, 'GET', `${PVS}?timeout=soon`);
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({
      reason: 'BadRequest',
      message: 'invalid timeout specified in the request URL - time: invalid duration "soon"',
    });

    const before = await snapshot(s, PVS);
    const c = await rawConnection(s);
    const body = JSON.stringify(pv('deadline'));
    c.write(
      `POST ${PVS}?timeout=100ms HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${s.adminToken}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n{`,
    );
    const text = await c.until((t) => t.includes('"code":504'));
    expect(text).toMatch(/^HTTP\/1\.1 504 /);
    expect(text).toContain(
      '"message":"Timeout: request did not complete within requested timeout - context deadline exceeded"',
    );
    expect(text).toContain('"reason":"Timeout"');
    c.destroy();
    expect(await snapshot(s, PVS)).toEqual(before);
  });

  it('a client that never reads its (large) response loses the connection at the request deadline', async () => {
    const slowReader = await startHostileServer();
    try {
      const big = 'x'.repeat(900 * 1024);
      for (let i = 0; i < 6; i++) {
        const r = await send(slowReader, 'POST', '/api/v1/namespaces/default/configmaps', {
          metadata: { name: `big-${i}` },
          data: { a: big },
        });
        expect(r.status).toBe(201);
      }
      const c = await rawConnection(slowReader);
      c.socket.pause();
      c.write(
        `GET /api/v1/namespaces/default/configmaps?timeout=500ms HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${slowReader.adminToken}\r\n\r\n`,
      );
      // A request with the same timeout=, started later, that can only end by it: once it has its
      // 504, the reader's deadline has passed as well.
      const marker = await rawConnection(slowReader);
      marker.write(
        `POST /api/v1/namespaces/default/configmaps?timeout=500ms HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${slowReader.adminToken}\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n{`,
      );
      await marker.until((t) => t.includes('"code":504'));
      marker.destroy();
      c.socket.resume();
      await c.closed;
      expect(c.text().endsWith(']}')).toBe(false);
      await expectReady(slowReader);
    } finally {
      await slowReader.close();
    }
  });

  it('a watch with timeout= ends by itself', async () => {
    const c = await rawConnection(s);
    c.write(`GET ${PVS}?watch=true&timeout=200ms HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${s.adminToken}\r\n\r\n`);
    const text = await c.until((t) => t.endsWith('0\r\n\r\n'));
    expect(text).toMatch(/^HTTP\/1\.1 200 /);
    c.destroy();
  });
});
