/** `stowage server` ×2 and `stowage up --etcd-servers` on one real etcd, as separate processes. */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EtcdClient } from '../src/store/etcd/client.js';
import { etcdMissing, startEtcd, type EtcdProcess } from '../src/store/etcd/etcd-process.test-kit.js';
import { BIN, built } from './helpers/env.js';
import { api, type Target } from './helpers/http.js';

if (etcdMissing) console.warn(`stowage server tests skipped: ${etcdMissing}`);
if (!built) console.warn('stowage server tests skipped: run `npm run build` first (npm test does)');

interface Running {
  readonly child: ChildProcess;
  readonly target: Target;
  stop(): Promise<void>;
}

async function spawnStowage(args: string[], urlPattern: RegExp, caFile: string, token: string): Promise<Running> {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const exit = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const url = await new Promise<string>((res, rej) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = urlPattern.exec(out);
      if (m) res(m[1]!);
    });
    void exit.then((code) => rej(new Error(`stowage ${args[0]} exited with ${code}: ${err}`)));
  });
  return {
    child,
    target: { baseUrl: url, token, caPem: readFileSync(caFile, 'utf8') },
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      expect(await exit).toBe(0);
    },
  };
}

describe.skipIf(etcdMissing !== undefined || !built)('stowage server on etcd', () => {
  let etcd: EtcdProcess;
  let dir: string;
  const TOKEN = 'shared-admin-token';
  beforeAll(async () => {
    etcd = await startEtcd();
    dir = mkdtempSync(join(tmpdir(), 'stowage-server-'));
    writeFileSync(join(dir, 'tokens.csv'), `${TOKEN},ops,1,"system:masters"\n`);
  }, 30_000);
  afterAll(async () => {
    await etcd?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const server = (name: string): Promise<Running> =>
    spawnStowage(
      [
        'server',
        '--etcd-servers',
        etcd.endpoint,
        '--bind-address',
        '127.0.0.1',
        '--secure-port',
        '0',
        '--cert-dir',
        join(dir, name),
        '--token-auth-file',
        join(dir, 'tokens.csv'),
      ],
      /API server (https:\/\/\S+) /,
      join(dir, name, 'pki', 'ca.crt'),
      TOKEN,
    );

  it('two servers with kube-apiserver flags serve one etcd: a write through one is read through the other', async () => {
    const [a, b] = [await server('a'), await server('b')];
    try {
      expect((await api(a.target, 'GET', '/readyz', undefined, { token: null })).status).toBe(200);
      const created = await api(a.target, 'POST', '/api/v1/namespaces/default/configmaps', {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'shared' },
        data: { k: 'v' },
      });
      expect(created.status).toBe(201);
      const got = await api(b.target, 'GET', '/api/v1/namespaces/default/configmaps/shared');
      expect(got.body.metadata.resourceVersion).toBe(created.body.metadata.resourceVersion);
      expect(
        (
          await api(b.target, 'GET', '/api/v1/namespaces/default/configmaps/shared', undefined, {
            token: 'not-in-the-file',
          })
        ).status,
      ).toBe(401);
    } finally {
      await a.stop();
      await b.stop();
    }
  }, 60_000);

  it('refuses to start without --etcd-servers, with a one-line message', async () => {
    const child = spawn(process.execPath, [BIN, 'server', '--cert-dir', join(dir, 'none')], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
    expect(code).not.toBe(0);
    expect(err).toBe('stowage: --etcd-servers is required\n');
  });

  it('refuses an --advertise-address that is not an IPv4 address, with a one-line message', () => {
    const r = spawnSync(
      process.execPath,
      [
        BIN,
        'server',
        '--etcd-servers',
        etcd.endpoint,
        '--cert-dir',
        join(dir, 'none'),
        '--advertise-address',
        'api.example',
      ],
      { encoding: 'utf8', timeout: 30_000 },
    );
    expect(r.status).toBe(1);
    expect(r.stderr).toBe('stowage: invalid --advertise-address "api.example": must be an IPv4 address\n');
  });

  it('`stowage up --etcd-servers` runs the control plane on that etcd', async () => {
    const dataDir = join(dir, 'up');
    const up = await spawnStowage(
      [
        'up',
        '--port',
        '0',
        '--data-dir',
        dataDir,
        '--no-node',
        '--no-controllers',
        '--etcd-servers',
        etcd.endpoint,
        '--etcd-prefix',
        '/up',
      ],
      /API server (https:\/\/\S+),/,
      join(dataDir, 'pki', 'ca.crt'),
      '',
    );
    try {
      const token = /token: (\S+)/.exec(readFileSync(join(dataDir, 'kubeconfig'), 'utf8'))![1]!;
      const t = { ...up.target, token };
      expect(
        (
          await api(t, 'POST', '/api/v1/namespaces/default/configmaps', {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name: 'on-etcd' },
          })
        ).status,
      ).toBe(201);
      // Under its own --etcd-prefix, in kube-apiserver's layout: the servers above (prefix /registry) do not see it.
      const client = new EtcdClient({ endpoints: [etcd.endpoint] });
      try {
        expect((await client.range({ key: '/up/configmaps/default/on-etcd' })).kvs).toHaveLength(1);
      } finally {
        client.close();
      }
    } finally {
      await up.stop();
    }
  }, 60_000);
});
