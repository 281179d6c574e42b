/**
 * Starts a real single-member etcd (Debian's `etcd-server`) on loopback for tests: a temp data dir,
 * free ports, stopped and removed by `stop()`. `etcdMissing` says why tests must skip.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EtcdClient } from './client.js';

/** Undefined when an `etcd` binary runs here; otherwise the reason tests needing it skip. */
export const etcdMissing: string | undefined = ((): string | undefined => {
  const r = spawnSync('etcd', ['--version'], { stdio: 'ignore' });
  return r.status === 0 ? undefined : 'no `etcd` binary on PATH (Debian package etcd-server; .ci/run installs it as root)';
})();

export interface EtcdProcess {
  readonly endpoint: string;
  readonly dataDir: string;
  /** SIGKILL-free stop: SIGTERM, wait for exit. Keeps the data dir. */
  halt(): Promise<void>;
  /** Starts etcd again on the same data dir and ports. */
  restart(): Promise<void>;
  /** Stops etcd and removes its data dir. */
  stop(): Promise<void>;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

async function waitServing(endpoint: string, child: ChildProcess): Promise<void> {
  const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`etcd exited with ${code}`))));
  const client = new EtcdClient({ endpoints: [endpoint], requestTimeoutMs: 20_000 });
  try {
    // waitForReady: the call is held until etcd accepts connections, then answered.
    await Promise.race([client.range({ key: 'health', countOnly: true }), exited]);
  } finally {
    client.close();
  }
}

export async function startEtcd(): Promise<EtcdProcess> {
  const dataDir = mkdtempSync(join(tmpdir(), 'stowage-etcd-'));
  const [clientPort, peerPort] = [await freePort(), await freePort()];
  const endpoint = `http://127.0.0.1:${clientPort}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  const args = [
    '--name', 'test',
    '--data-dir', join(dataDir, 'data'),
    '--listen-client-urls', endpoint,
    '--advertise-client-urls', endpoint,
    '--listen-peer-urls', peer,
    '--initial-advertise-peer-urls', peer,
    '--initial-cluster', `test=${peer}`,
    '--log-outputs', 'stderr',
    '--logger', 'zap',
    '--log-level', 'error',
  ];
  let child: ChildProcess | undefined;
  const launch = async (): Promise<void> => {
    child = spawn('etcd', args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4_000)));
    try {
      await waitServing(endpoint, child);
    } catch (e) {
      child.kill('SIGKILL');
      throw new Error(`etcd did not start: ${(e as Error).message}\n${stderr}`);
    }
  };
  const halt = async (): Promise<void> => {
    const c = child;
    child = undefined;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const exit = new Promise<void>((r) => c.once('exit', () => r()));
    c.kill('SIGTERM');
    await exit;
  };
  try {
    await launch();
  } catch (e) {
    rmSync(dataDir, { recursive: true, force: true });
    throw e;
  }
  return {
    endpoint,
    dataDir,
    halt,
    restart: launch,
    stop: async () => {
      await halt();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
