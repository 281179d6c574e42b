import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { freeLoopbackPort } from '../util/freeport.js';
import { canFailOver, parseServerList, ServerList } from './balancer.js';
import { HttpTransport } from './http.js';

const err = (code: string): Error => Object.assign(new Error(code), { code });

describe('canFailOver', () => {
  it.each([
    { code: 'ECONNREFUSED', method: 'POST', want: true },
    { code: 'EHOSTUNREACH', method: 'PUT', want: true },
    { code: 'ECONNRESET', method: 'GET', want: true },
    { code: 'ECONNRESET', method: 'POST', want: false }, // the write may have been received
    { code: 'CERT_HAS_EXPIRED', method: 'GET', want: false },
  ])('$code on $method → $want', ({ code, method, want }) => expect(canFailOver(err(code), method)).toBe(want));

  it('an error without a code (an HTTP answer) never fails over', () =>
    expect(canFailOver(new Error('x'), 'GET')).toBe(false));
});

describe('ServerList', () => {
  it('moves on once per failure of the current server and wraps around', () => {
    const l = new ServerList(['https://a:1', 'https://b:2']);
    const a = l.current();
    l.failed(a);
    l.failed(a); // a second request that failed on the same server does not skip b
    expect(l.current().host).toBe('b:2');
    l.failed(l.current());
    expect(l.current().host).toBe('a:1');
  });

  it('parses repeated and comma-separated --server values', () =>
    expect(parseServerList(['https://a:1,https://b:2', ' https://c:3 ', ''])).toEqual([
      'https://a:1',
      'https://b:2',
      'https://c:3',
    ]));
});

describe('HttpTransport over several servers', () => {
  const servers: http.Server[] = [];
  afterEach(async () => {
    for (const s of servers.splice(0)) await new Promise<void>((r) => s.close(() => r()));
  });
  const serve = async (name: string): Promise<string> => {
    const s = http.createServer((_req, res) => res.end(JSON.stringify({ name })));
    servers.push(s);
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
  };

  it('fails over from a server that refuses connections and stays on the one that answered', async () => {
    const dead = `http://127.0.0.1:${await freeLoopbackPort()}`;
    const live = await serve('live');
    const t = new HttpTransport({ server: dead, servers: [live] });
    try {
      expect(await t.json({ method: 'POST', path: '/x', body: {} })).toEqual({ name: 'live' });
      expect(await t.json({ method: 'GET', path: '/x' })).toEqual({ name: 'live' });
    } finally {
      t.close();
    }
  });

  it('reports the last failure when no server can be reached', async () => {
    const t = new HttpTransport({
      server: `http://127.0.0.1:${await freeLoopbackPort()}`,
      servers: [`http://127.0.0.1:${await freeLoopbackPort()}`],
    });
    try {
      await expect(t.json({ method: 'GET', path: '/x' })).rejects.toThrow();
    } finally {
      t.close();
    }
  });
});
