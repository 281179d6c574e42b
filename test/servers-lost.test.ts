/**
 * Issue #24 item 7: API servers lost one after another. Two `stowage server`s on one etcd; the
 * node agent, the leader-elected controllers and the CSI sidecar are each given every server
 * (their kubeconfig names the first, `--server` the others, the replacement included) and fail
 * over between them with the client-side balancer. Server 1 is SIGKILLed; a claim created then
 * binds and its pod runs (volumes only: no container runtime). A replacement server 3 starts and
 * server 2 is SIGKILLed; again a claim binds and its pod runs. No component exits on the way.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, cpSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PersistentVolumeClaim, Pod } from 'kubernetes-types/core/v1.js';
import { afterAll, beforeAll, describe, expect, it, onTestFailed, vi } from 'vitest';
import { loadKubeconfig } from '../src/client/kubeconfig.js';
import { RestClient } from '../src/client/rest.js';
import { mountPointsUnder } from '../bench/chaos/invariants.js';
import { unmount } from '../src/mount/mount.js';
import { etcdMissing, startEtcd, type EtcdProcess } from '../src/store/etcd/etcd-process.test-kit.js';
import { freeLoopbackPort } from '../src/util/freeport.js';
import { BIN, built, isRoot } from './helpers/env.js';

const skip =
  etcdMissing ??
  (!built ? 'run `npm run build` first' : !isRoot ? 'the node agent mounts volumes: needs root' : undefined);
if (skip) console.warn(`servers-lost test skipped: ${skip}`);

const DRIVER = 'hostpath.csi.stowage.io';
const NODE = 'lost-node';
const TIMINGS = ['--lease-duration', '8s', '--renew-deadline', '6s', '--retry-period', '1s'];

interface Proc {
  readonly name: string;
  readonly child: ChildProcess;
  readonly exit: Promise<number | null>;
}

const claim = (i: number): PersistentVolumeClaim => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name: `c-${i}`, namespace: 'default' },
  spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'lost', resources: { requests: { storage: '1Mi' } } },
});
const pod = (i: number): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: `p-${i}`, namespace: 'default' },
  spec: {
    nodeName: NODE,
    containers: [{ name: 'app', image: 'busybox', volumeMounts: [{ name: 'data', mountPath: '/data' }] }],
    volumes: [{ name: 'data', persistentVolumeClaim: { claimName: `c-${i}` } }],
  },
});

describe.skipIf(skip !== undefined)('API servers lost one after another', () => {
  let dir: string;
  let etcd: EtcdProcess;
  let client: RestClient;
  const procs: Proc[] = [];
  const ports: number[] = [];
  const urls: string[] = [];

  const spawnLogged = (name: string, args: string[]): Proc => {
    const out = openSync(join(dir, 'logs', `${name}.log`), 'a');
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', out, out] });
    closeSync(out);
    const p = { name, child, exit: new Promise<number | null>((r) => child.once('exit', (code) => r(code))) };
    procs.push(p);
    return p;
  };
  const alive = (p: Proc): boolean => p.child.exitCode === null && p.child.signalCode === null;
  const logOf = (name: string): string => readFileSync(join(dir, 'logs', `${name}.log`), 'utf8');

  /** Server i (1-based) on its pre-chosen port, sharing server 1's pki/ (CA, admin token). */
  const startServer = async (i: number): Promise<Proc> => {
    const certDir = join(dir, `api-${i}`);
    if (i > 1) cpSync(join(dir, 'api-1', 'pki'), join(certDir, 'pki'), { recursive: true });
    const name = `server-${i}`;
    const p = spawnLogged(name, [
      'server',
      '--etcd-servers',
      etcd.endpoint,
      '--bind-address',
      '127.0.0.1',
      '--secure-port',
      String(ports[i - 1]),
      '--cert-dir',
      certDir,
    ]);
    await vi.waitFor(
      () => {
        if (!alive(p)) throw new Error(`${name} exited`);
        expect(logOf(name)).toMatch(/API server https:\/\/\S+ /);
      },
      { timeout: 60_000, interval: 100 },
    );
    return p;
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'stowage-lost-'));
    mkdirSync(join(dir, 'logs'));
    const nodeRoot = join(dir, 'node');
    const csiDir = join(nodeRoot, 'plugins', DRIVER);
    mkdirSync(csiDir, { recursive: true });
    etcd = await startEtcd();
    for (let i = 0; i < 3; i++) {
      ports.push(await freeLoopbackPort());
      urls.push(`https://127.0.0.1:${ports[i]}`);
    }
    await startServer(1);
    await startServer(2);
    const kubeconfig = join(dir, 'api-1', 'kubeconfig');
    // Every component: the kubeconfig names server 1; --server lists the others (repeated flag).
    const servers = ['--server', urls[1]!, '--server', urls[2]!];
    const cfg = await loadKubeconfig(kubeconfig);
    client = new RestClient({ ...cfg, servers: urls.slice(1), timeoutMs: 10_000 });

    spawnLogged('driver', [
      'csi-hostpath',
      '--endpoint',
      `unix://${join(csiDir, 'csi.sock')}`,
      '--node-id',
      NODE,
      '--state-dir',
      join(dir, 'driver'),
    ]);
    await vi.waitFor(() => expect(existsSync(join(csiDir, 'csi.sock'))).toBe(true), { timeout: 30_000 });
    spawnLogged('registrar', [
      'csi-registrar',
      '--csi-address',
      join(csiDir, 'csi.sock'),
      '--kubelet-registration-path',
      join(csiDir, 'csi.sock'),
      '--plugin-registration-path',
      join(nodeRoot, 'plugins_registry'),
    ]);
    spawnLogged('node', [
      'node',
      '--kubeconfig',
      kubeconfig,
      ...servers,
      '--node-name',
      NODE,
      '--root-dir',
      nodeRoot,
      '--backoff-cap',
      '2s',
      '--port',
      '0',
    ]);
    spawnLogged('controllers', [
      'controllers',
      '--kubeconfig',
      kubeconfig,
      ...servers,
      '--leader-elect',
      ...TIMINGS.map((t, i) => (i % 2 === 0 ? t.replace('--', '--leader-elect-') : t)),
    ]);
    spawnLogged('sidecar', [
      'csi-sidecar',
      '--csi-address',
      `unix://${join(csiDir, 'csi.sock')}`,
      '--kubeconfig',
      kubeconfig,
      `--server=${urls[1]},${urls[2]}`, // the comma-separated form
      '--leader-election',
      ...TIMINGS.map((t, i) => (i % 2 === 0 ? t.replace('--', '--leader-election-') : t)),
    ]);
    await client.resource('CSIDriver').create({
      apiVersion: 'storage.k8s.io/v1',
      kind: 'CSIDriver',
      metadata: { name: DRIVER },
      spec: { attachRequired: false, podInfoOnMount: true, volumeLifecycleModes: ['Persistent'] },
    });
    await client.resource('StorageClass').create({
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      metadata: { name: 'lost' },
      provisioner: DRIVER,
      reclaimPolicy: 'Delete',
      volumeBindingMode: 'Immediate',
    });
    await vi.waitFor(
      async () =>
        expect((await client.resource('CSINode').get(NODE)).spec.drivers?.map((d) => d.name)).toEqual([DRIVER]),
      { timeout: 60_000, interval: 200 },
    );
  }, 180_000);

  afterAll(async () => {
    for (const p of [...procs].reverse()) p.child.kill('SIGTERM');
    const timer = setTimeout(() => procs.forEach((p) => p.child.kill('SIGKILL')), 15_000);
    await Promise.all(procs.map((p) => p.exit));
    clearTimeout(timer);
    client?.close();
    await etcd?.stop();
    if (dir) {
      const left = await mountPointsUnder(dir);
      for (const m of left) await unmount(m).catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
      expect(left).toEqual([]);
    }
  }, 60_000);

  const tails = (): string =>
    procs
      .map(
        (p) =>
          `--- ${p.name} (${alive(p) ? 'alive' : `exited ${p.child.exitCode ?? p.child.signalCode}`}) ---\n${logOf(
            p.name,
          )
            .trimEnd()
            .split('\n')
            .slice(-20)
            .join('\n')}`,
      )
      .join('\n');

  /** A claim created now binds (provisioned by the sidecar, bound by the controllers) and its pod runs. */
  const claimBindsAndPodRuns = async (i: number): Promise<void> => {
    await vi.waitFor(() => client.resource('PersistentVolumeClaim').create(claim(i)), { timeout: 30_000 });
    await vi.waitFor(() => client.resource('Pod').create(pod(i)), { timeout: 30_000 });
    await vi.waitFor(
      async () =>
        expect(
          (await client.resource('PersistentVolumeClaim').get(`c-${i}`, { namespace: 'default' })).status?.phase,
        ).toBe('Bound'),
      { timeout: 90_000, interval: 250 },
    );
    await vi.waitFor(
      async () =>
        expect((await client.resource('Pod').get(`p-${i}`, { namespace: 'default' })).status?.phase).toBe('Running'),
      { timeout: 90_000, interval: 250 },
    );
  };
  const components = (): Proc[] => procs.filter((p) => ['node', 'controllers', 'sidecar'].includes(p.name));

  it('a claim created after each server is killed binds and its pod runs; no component exits', async () => {
    onTestFailed(() => console.error(tails()));
    await claimBindsAndPodRuns(0);

    const server1 = procs.find((p) => p.name === 'server-1')!;
    server1.child.kill('SIGKILL');
    await server1.exit;
    await claimBindsAndPodRuns(1);

    await startServer(3);
    const server2 = procs.find((p) => p.name === 'server-2')!;
    server2.child.kill('SIGKILL');
    await server2.exit;
    await claimBindsAndPodRuns(2);

    expect(
      components()
        .filter((p) => !alive(p))
        .map((p) => p.name),
    ).toEqual([]);
    for (const i of [0, 1]) {
      expect((await client.resource('Pod').get(`p-${i}`, { namespace: 'default' })).status?.phase).toBe('Running');
    }

    // Through server 3 alone, everything is torn down and deleted: pods, mounts, claims, volumes.
    for (const i of [0, 1, 2]) await client.resource('Pod').delete(`p-${i}`, { namespace: 'default' });
    await vi.waitFor(
      async () => expect((await client.resource('Pod').list({ namespace: 'default' })).items).toEqual([]),
      {
        timeout: 90_000,
        interval: 250,
      },
    );
    for (const i of [0, 1, 2])
      await client.resource('PersistentVolumeClaim').delete(`c-${i}`, { namespace: 'default' });
    await vi.waitFor(async () => expect((await client.resource('PersistentVolume').list()).items).toEqual([]), {
      timeout: 90_000,
      interval: 250,
    });
    expect(await mountPointsUnder(dir)).toEqual([]);
  }, 400_000);
});
