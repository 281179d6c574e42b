/**
 * Starts a real single-member etcd (Debian's `etcd-server`) on loopback for tests: a temp data dir,
 * free ports, stopped and removed by `stop()`. `etcdMissing` says why tests must skip.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { freeLoopbackPort } from '../../util/freeport.js';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { EtcdClient } from './client.js';

/** Undefined when an `etcd` binary runs here; otherwise the reason tests needing it skip. */
export const etcdMissing: string | undefined = ((): string | undefined => {
  const r = spawnSync('etcd', ['--version'], { stdio: 'ignore' });
  return r.status === 0
    ? undefined
    : 'no `etcd` binary on PATH (Debian package etcd-server; .ci/run installs it as root)';
})();

export interface EtcdMember {
  readonly name: string;
  readonly endpoint: string;
  /** SIGTERM (or `signal`) and wait for exit; keeps the data dir. */
  halt(signal?: NodeJS.Signals): Promise<void>;
  /** Starts the member again on the same data dir and ports; resolves once it serves (needs quorum). */
  restart(): Promise<void>;
}

export interface EtcdCluster {
  readonly members: readonly EtcdMember[];
  readonly endpoints: readonly string[];
  /** Stops every member and removes the data dirs. */
  stop(): Promise<void>;
}

export interface EtcdProcess extends EtcdMember {
  readonly dataDir: string;
  /** Stops etcd and removes its data dir. */
  stop(): Promise<void>;
}

async function waitServing(endpoint: string, child: ChildProcess, ca?: Buffer): Promise<void> {
  let exitCode: number | null | undefined;
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code) => {
      exitCode = code;
      reject(new Error(`etcd exited with ${code}`));
    }),
  );
  exited.catch(() => {});
  const client = new EtcdClient({ endpoints: [endpoint], requestTimeoutMs: 30_000, tls: ca ? { ca } : undefined });
  try {
    // waitForReady holds the call until etcd accepts connections; a linearizable read needs quorum.
    // A member joining while the others elect a leader answers "leader changed": ask again.
    for (let attempt = 0; ; attempt++) {
      try {
        await Promise.race([client.range({ key: 'health', countOnly: true }), exited]);
        return;
      } catch (e) {
        if (exitCode !== undefined || attempt >= 20 || !/leader changed|no leader|timed out/.test((e as Error).message))
          throw e;
      }
    }
  } finally {
    client.close();
  }
}

/** Starts `size` members on loopback (a temp data dir each, free ports); resolves once all serve. */
export interface EtcdTlsFiles {
  readonly certFile: string;
  readonly keyFile: string;
  readonly caFile: string;
}

/** `tls`: clients connect over https with that serving certificate (no client certificates). */
export async function startEtcdCluster(
  size: number,
  tls?: EtcdTlsFiles,
): Promise<EtcdCluster & { readonly root: string }> {
  const scheme = tls ? 'https' : 'http';
  const ca = tls ? readFileSync(tls.caFile) : undefined;
  const root = mkdtempSync(join(tmpdir(), 'stowage-etcd-'));
  const specs = [];
  for (let i = 0; i < size; i++) {
    const [clientPort, peerPort] = [await freeLoopbackPort(), await freeLoopbackPort()];
    specs.push({
      name: `m${i}`,
      endpoint: `${scheme}://127.0.0.1:${clientPort}`,
      peer: `http://127.0.0.1:${peerPort}`,
    });
  }
  const initialCluster = specs.map((m) => `${m.name}=${m.peer}`).join(',');
  const members = specs.map((m): EtcdMember => {
    const args = [
      '--name',
      m.name,
      '--data-dir',
      join(root, m.name),
      '--listen-client-urls',
      m.endpoint,
      '--advertise-client-urls',
      m.endpoint,
      '--listen-peer-urls',
      m.peer,
      '--initial-advertise-peer-urls',
      m.peer,
      '--initial-cluster',
      initialCluster,
      '--initial-cluster-token',
      basename(root),
      '--logger',
      'zap',
      '--log-outputs',
      'stderr',
      '--log-level',
      'error',
      ...(tls ? ['--cert-file', tls.certFile, '--key-file', tls.keyFile] : []),
    ];
    let child: ChildProcess | undefined;
    const halt = async (signal: NodeJS.Signals = 'SIGTERM'): Promise<void> => {
      const c = child;
      child = undefined;
      if (!c || c.exitCode !== null || c.signalCode !== null) return;
      const exit = new Promise<void>((r) => c.once('exit', () => r()));
      c.kill(signal);
      await exit;
    };
    const restart = async (): Promise<void> => {
      const c = spawn('etcd', args, { stdio: ['ignore', 'ignore', 'pipe'] });
      child = c;
      let stderr = '';
      c.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4_000)));
      try {
        await waitServing(m.endpoint, c, ca);
      } catch (e) {
        c.kill('SIGKILL');
        throw new Error(`etcd ${m.name} did not start: ${(e as Error).message}\n${stderr}`);
      }
    };
    return { name: m.name, endpoint: m.endpoint, halt, restart };
  });
  const stop = async (): Promise<void> => {
    await Promise.all(members.map((m) => m.halt()));
    rmSync(root, { recursive: true, force: true });
  };
  try {
    await Promise.all(members.map((m) => m.restart()));
  } catch (e) {
    await stop();
    throw e;
  }
  return { root, members, endpoints: members.map((m) => m.endpoint), stop };
}

/** One member on loopback, for most tests. */
export async function startEtcd(tls?: EtcdTlsFiles): Promise<EtcdProcess> {
  const c = await startEtcdCluster(1, tls);
  const m = c.members[0]!;
  return { ...m, dataDir: c.root, stop: c.stop };
}
