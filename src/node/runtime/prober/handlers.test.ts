import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CriError } from '../client.js';
import { resolvePort, runHandler, type HandlerTarget } from './handlers.js';

let server: Server;
let port: number;
let closedPort: number;

beforeAll(async () => {
  server = createServer((req, res) =>
    res
      .writeHead(req.url === '/ok' ? 200 : req.url === '/moved' ? 302 : 500, { Location: '/ok' })
      .end(req.headers['user-agent']),
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
  const other = createServer();
  await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
  closedPort = (other.address() as AddressInfo).port;
  await new Promise((r) => other.close(r));
});
afterAll(() => new Promise((r) => server.close(r)));

const target = (exec?: HandlerTarget['cri']['execSync']): HandlerTarget => ({
  cri: { execSync: exec ?? (async () => ({ stdout: Buffer.from(''), stderr: Buffer.from(''), exitCode: 0 })) },
  containerId: 'c1',
  container: { name: 'c', ports: [{ name: 'http', containerPort: 8080 }] },
  podIP: '127.0.0.1',
});

describe('probe and hook handlers', () => {
  it.each([
    { path: '/ok', want: 'success' },
    { path: '/moved', want: 'success' },
    { path: '/bad', want: 'failure' },
  ])('httpGet $path → $want, as kube-probe', async ({ path, want }) => {
    const out = await runHandler({ httpGet: { path, port } }, target(), 1);
    expect(out.result).toBe(want);
    if (want === 'success' && path === '/ok') expect(out.output).toMatch(/^kube-probe\/1\.\d+$/);
    if (want === 'failure') expect(out.output).toBe('HTTP probe failed with statuscode: 500');
  });

  it('httpGet and tcpSocket to a closed port fail with the dial error', async () => {
    expect((await runHandler({ httpGet: { path: '/', port: closedPort } }, target(), 1)).output).toBe(
      `Get "http://127.0.0.1:${closedPort}/": dial tcp 127.0.0.1:${closedPort}: connect: connection refused`,
    );
    expect(await runHandler({ tcpSocket: { port: closedPort } }, target(), 1)).toEqual({
      result: 'failure',
      output: `dial tcp 127.0.0.1:${closedPort}: connect: connection refused`,
    });
    expect((await runHandler({ tcpSocket: { port } }, target(), 1)).result).toBe('success');
  });

  it('exec: exit 0 succeeds, other codes fail with the output, a runtime timeout says so', async () => {
    const exec = (exitCode: number) =>
      target(async () => ({ stdout: Buffer.from('out '), stderr: Buffer.from('err'), exitCode }));
    expect(await runHandler({ exec: { command: ['true'] } }, exec(0), 1)).toEqual({
      result: 'success',
      output: 'out err',
    });
    expect(await runHandler({ exec: { command: ['false'] } }, exec(1), 1)).toEqual({
      result: 'failure',
      output: 'out err',
    });
    const slow = target(async () => {
      throw new CriError('/runtime.v1.RuntimeService/ExecSync', grpc.status.DEADLINE_EXCEEDED, 'timeout 1s exceeded');
    });
    expect(await runHandler({ exec: { command: ['sleep', '9'] } }, slow, 1)).toEqual({
      result: 'failure',
      output: 'command "sleep 9" timed out',
    });
  });

  it('ports by number, numeric string or the container port name', () => {
    const c = target().container;
    expect([resolvePort(80, c), resolvePort('81', c), resolvePort('http', c)]).toEqual([80, 81, 8080]);
    expect(() => resolvePort('nope', c)).toThrow(/couldn't find port: nope/);
  });
});
