/**
 * README "Run it on more than one machine": the command lines of that section, as written, run on
 * one host (etcd, two API servers, the controllers and the sidecar twice each with leader election,
 * a node agent with the hostpath driver and its registrar); a claim and a pod go through them.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PersistentVolumeClaim, Pod } from 'kubernetes-types/core/v1.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mountPointsUnder, readDriverRecords } from '../bench/chaos/invariants.js';
import { loadKubeconfig } from '../src/client/kubeconfig.js';
import { RestClient } from '../src/client/rest.js';
import { unmount } from '../src/mount/mount.js';
import { etcdMissing } from '../src/store/etcd/etcd-process.test-kit.js';
import { freeLoopbackPort } from '../src/util/freeport.js';
import { BIN, ROOT, built, isRoot } from './helpers/env.js';

const skip =
  etcdMissing ??
  (!built ? 'run `npm run build` first' : !isRoot ? 'the node agent mounts volumes: needs root' : undefined);
if (skip) console.warn(`README cluster test skipped: ${skip}`);

const DRIVER = 'hostpath.csi.stowage.io';

/** The section's command lines: continuations joined, comments dropped. */
function readmeCommands(): string[] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = /## Run it on more than one machine\n([\s\S]*?)\n## /.exec(readme)![1]!;
  const block = section
    .split('\n')
    .filter((l) => l.startsWith('    '))
    .map((l) => l.slice(4))
    .join('\n');
  return block
    .replace(/\\\n\s*/g, '')
    .split('\n')
    .filter((l) => l.trim() !== '' && !l.startsWith('#'));
}

/** A command line with its `$NAME`s filled in, as argv. */
function argv(line: string, vars: Readonly<Record<string, string>>): string[] {
  return line
    .replace(/\$([A-Z_]+)/g, (_, name: string) => {
      const v = vars[name];
      if (v === undefined) throw new Error(`README names $${name}, which this test does not fill in`);
      return v;
    })
    .split(/\s+/)
    .filter(Boolean);
}

describe.skipIf(skip !== undefined)('README: Run it on more than one machine', () => {
  let dir: string;
  const children: { name: string; child: ChildProcess; exit: Promise<void> }[] = [];
  let clients: RestClient[] = [];
  let root: string;

  const run = (name: string, args: string[]): ChildProcess => {
    const [cmd, ...rest] = args;
    const child =
      cmd === 'stowage'
        ? spawn(process.execPath, [BIN, ...rest], { stdio: ['ignore', 'pipe', 'ignore'] })
        : spawn(cmd!, rest, { stdio: ['ignore', 'ignore', 'ignore'] });
    children.push({ name, child, exit: new Promise((r) => child.once('exit', () => r())) });
    return child;
  };
  const apiServerUrl = (child: ChildProcess): Promise<string> =>
    new Promise((res, rej) => {
      let out = '';
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /API server (https:\/\/\S+) /.exec(out);
        if (m) res(m[1]!);
      });
      child.once('exit', (code) => rej(new Error(`stowage server exited with ${code}`)));
    });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'stowage-readme-'));
    root = join(dir, 'node');
    const commands = readmeCommands();
    const pick = (prefix: string): string => {
      const found = commands.filter((c) => c.startsWith(`${prefix} `));
      expect(found, prefix).toHaveLength(1);
      return found[0]!;
    };
    // Every command of the section is one of these, and each is run below.
    const KNOWN = [
      'etcd',
      'stowage server',
      'stowage controllers',
      'stowage csi-sidecar',
      'stowage node',
      'stowage csi-hostpath',
      'stowage csi-registrar',
    ];
    expect(commands.map((c) => KNOWN.find((k) => c.startsWith(`${k} `)) ?? c)).toEqual(KNOWN);

    const [etcdPort, peerPort] = [await freeLoopbackPort(), await freeLoopbackPort()];
    const socket = join(root, 'plugins', DRIVER, 'csi.sock');
    mkdirSync(join(root, 'plugins', DRIVER), { recursive: true });
    const common = {
      ETCD_DIR: join(dir, 'etcd'),
      ETCD_URL: `http://127.0.0.1:${etcdPort}`,
      ETCD_PEER_URL: `http://127.0.0.1:${peerPort}`,
      ADDRESS: '127.0.0.1',
      CSI_SOCKET: socket,
      NODE: 'readme',
      ROOT_DIR: root,
      DRIVER_STATE: join(dir, 'driver'),
    };
    run('etcd', argv(pick('etcd'), common));
    // Two API servers; the second gets a copy of the first one's pki/ (same CA and admin token).
    const certDirs = [join(dir, 'api-1'), join(dir, 'api-2')];
    const urls: string[] = [];
    for (const [i, certDir] of certDirs.entries()) {
      if (i > 0) cpSync(join(certDirs[0]!, 'pki'), join(certDir, 'pki'), { recursive: true });
      const vars = { ...common, PORT: String(await freeLoopbackPort()), CERT_DIR: certDir };
      urls.push(await apiServerUrl(run(`server-${i + 1}`, argv(pick('stowage server'), vars))));
    }
    expect(urls).toHaveLength(2);
    clients = await Promise.all(certDirs.map(async (d) => new RestClient(await loadKubeconfig(join(d, 'kubeconfig')))));
    // Each of the two controllers and sidecars talks to its own API server.
    const kube = (i: number): Record<string, string> => ({ ...common, KUBECONFIG: join(certDirs[i]!, 'kubeconfig') });
    run('driver', argv(pick('stowage csi-hostpath'), common));
    for (const i of [0, 1]) {
      run(`controllers-${i + 1}`, argv(pick('stowage controllers'), kube(i)));
      run(`sidecar-${i + 1}`, argv(pick('stowage csi-sidecar'), kube(i)));
    }
    run('registrar', argv(pick('stowage csi-registrar'), common));
    run('node', argv(pick('stowage node'), kube(0)));
    await clients[0]!.resource('CSIDriver').create({
      apiVersion: 'storage.k8s.io/v1',
      kind: 'CSIDriver',
      metadata: { name: DRIVER },
      spec: { attachRequired: false, podInfoOnMount: true },
    });
    await clients[0]!.resource('StorageClass').create({
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      metadata: { name: 'local' },
      provisioner: DRIVER,
      reclaimPolicy: 'Delete',
      volumeBindingMode: 'WaitForFirstConsumer',
    });
  }, 120_000);

  afterAll(async () => {
    for (const c of [...children].reverse()) c.child.kill('SIGTERM');
    const timer = setTimeout(() => children.forEach((c) => c.child.kill('SIGKILL')), 15_000);
    await Promise.all(children.map((c) => c.exit));
    clearTimeout(timer);
    for (const c of clients) c.close();
    if (root) for (const m of await mountPointsUnder(root)) await unmount(m).catch(() => undefined);
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it('a claim is provisioned and its pod runs with the volume mounted; one leader each; all of it is undone on deletion', async () => {
    const [one, two] = [clients[0]!, clients[1]!];
    const claim: PersistentVolumeClaim = {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'data', namespace: 'default' },
      spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'local', resources: { requests: { storage: '1Mi' } } },
    };
    const pod: Pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'app', namespace: 'default' },
      spec: {
        containers: [{ name: 'app', image: 'busybox', volumeMounts: [{ name: 'data', mountPath: '/data' }] }],
        volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }],
      },
    };
    await one.resource('PersistentVolumeClaim').create(claim);
    await two.resource('Pod').create(pod);
    await expect
      .poll(async () => (await two.resource('Pod').get('app', { namespace: 'default' })).status?.phase, {
        timeout: 60_000,
        interval: 250,
      })
      .toBe('Running');
    expect((await one.resource('PersistentVolumeClaim').get('data', { namespace: 'default' })).status?.phase).toBe(
      'Bound',
    );
    expect((await mountPointsUnder(join(root, 'pods'))).length).toBeGreaterThan(0);
    // Two candidates each, one holder each.
    const leases = (await one.resource('Lease').list({ namespace: 'kube-system' })).items
      .map((l) => l.metadata?.name)
      .sort();
    expect(leases).toEqual(['external-csi-sidecar-hostpath-csi-stowage-io', 'stowage-controllers']);

    await two.resource('Pod').delete('app', { namespace: 'default' });
    await expect
      .poll(async () => (await one.resource('Pod').list({ namespace: 'default' })).items.length, {
        timeout: 60_000,
        interval: 250,
      })
      .toBe(0);
    await one.resource('PersistentVolumeClaim').delete('data', { namespace: 'default' });
    await expect
      .poll(async () => (await two.resource('PersistentVolume').list()).items.length, {
        timeout: 60_000,
        interval: 250,
      })
      .toBe(0);
    expect(await mountPointsUnder(root)).toEqual([]);
    expect(Object.keys(readDriverRecords(join(dir, 'driver')).volumes ?? {})).toEqual([]);
  }, 120_000);
});
