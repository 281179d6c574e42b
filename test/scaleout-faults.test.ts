/**
 * The scaled-out control plane under faults (issue 17, item 4 and its "checked unseen"): a
 * 3-member etcd, two `stowage server`s on it, two `stowage controllers --leader-elect` and two
 * `stowage csi-sidecar --leader-election` (each pair split across the two servers), the hostpath
 * driver with ControllerPublish behind a recording CSI proxy, and a node agent (no container
 * runtime: a pod is Running once its volumes are mounted) that reaches the servers through a TCP
 * balancer, as nodes reach an HA control plane. Mid-provisioning the etcd raft leader and the
 * controllers leader are SIGKILLed; mid-attach the sidecar leader and one API server; the etcd
 * member is restarted and, as an operator would, the processes configured for the dead server
 * are restarted against the other. Then: every claim Bound to its own PV, one driver volume per
 * PV, every pod's volume attached and mounted, and no attachment lost on the way (no
 * ControllerUnpublish/NodeUnstage/NodeUnpublish, no VolumeAttachment deleted while pods live).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  closeSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PersistentVolumeClaim, Pod } from 'kubernetes-types/core/v1.js';
import type { VolumeAttachment } from 'kubernetes-types/storage/v1.js';
import { afterAll, beforeAll, describe, expect, it, onTestFailed, vi } from 'vitest';
import { DRIVER, NODE_NAME } from '../bench/chaos/cluster.js';
import { startFaultProxy, type FaultProxy } from '../bench/chaos/fault-proxy.js';
import {
  checkEmpty,
  checkSteady,
  mountPointsUnder,
  takeSnapshot,
  type Snapshot,
  type SnapshotSource,
} from '../bench/chaos/invariants.js';
import { informerFor, isTombstone, objectOf } from '../src/client/informer.js';
import { loadKubeconfig } from '../src/client/kubeconfig.js';
import { RestClient } from '../src/client/rest.js';
import { unmount } from '../src/mount/mount.js';
import {
  etcdMissing,
  startEtcdCluster,
  type EtcdCluster,
  type EtcdMember,
} from '../src/store/etcd/etcd-process.test-kit.js';
import { freeLoopbackPort } from '../src/util/freeport.js';
import { BIN, built, isRoot } from './helpers/env.js';

const skip =
  etcdMissing ??
  (!built ? 'run `npm run build` first' : !isRoot ? 'the node agent mounts volumes: needs root' : undefined);
if (skip) console.warn(`scale-out fault test skipped: ${skip}`);

// Short client-go timings through the real flags, as in leader-takeover.test.ts.
const TIMINGS = { 'lease-duration': '8s', 'renew-deadline': '6s', 'retry-period': '1s' };
const CLAIMS = 24;
const PODS = 10;
/** Calls that undo an attachment or a mount: none may happen while every pod lives. */
const UNDOING = ['ControllerUnpublishVolume', 'NodeUnstageVolume', 'NodeUnpublishVolume', 'DeleteVolume'];

interface Proc {
  readonly name: string;
  readonly child: ChildProcess;
  readonly exit: Promise<number | null>;
  readonly server: number;
  stderr(): string;
}

/** A gate that holds calls until opened. */
function gate(): { wait: Promise<void>; open(): void } {
  let open = (): void => undefined;
  const wait = new Promise<void>((r) => (open = r));
  return { wait, open };
}

/** A TCP balancer in front of the API servers: each connection goes to the next backend that accepts it. */
async function startBalancer(backends: readonly number[]): Promise<{ port: number; close(): Promise<void> }> {
  let next = 0;
  const sockets = new Set<Socket>();
  const track = (s: Socket): Socket => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
    return s;
  };
  const server: Server = createServer((client) => {
    track(client).on('error', () => client.destroy());
    client.pause();
    const tryBackend = (left: number): void => {
      if (left === 0) return void client.destroy();
      const port = backends[next++ % backends.length]!;
      const up = track(connect(port, '127.0.0.1'));
      // Refused (a dead server): the next backend; once connected, either side closing closes both.
      up.once('error', () => tryBackend(left - 1));
      up.once('connect', () => {
        up.removeAllListeners('error');
        up.on('error', () => client.destroy());
        up.once('close', () => client.destroy());
        client.once('close', () => up.destroy());
        client.pipe(up);
        up.pipe(client);
        client.resume();
      });
    };
    tryBackend(backends.length);
  });
  const port = await freeLoopbackPort();
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  return {
    port,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** The raft leader among `members` (etcd's own metric). */
async function raftLeader(members: readonly EtcdMember[]): Promise<EtcdMember> {
  return vi.waitFor(
    async () => {
      for (const m of members) {
        const metrics = await fetch(`${m.endpoint}/metrics`)
          .then((r) => r.text())
          .catch(() => '');
        if (/^etcd_server_is_leader 1$/m.test(metrics)) return m;
      }
      throw new Error('no etcd member says it leads');
    },
    { timeout: 30_000, interval: 200 },
  );
}

const claim = (i: number): PersistentVolumeClaim => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name: `c-${i}`, namespace: 'default' },
  spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'scale', resources: { requests: { storage: '1Mi' } } },
});
const pod = (i: number): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: `p-${i}`, namespace: 'default' },
  spec: {
    containers: [{ name: 'app', image: 'busybox', volumeMounts: [{ name: 'data', mountPath: '/data' }] }],
    volumes: [{ name: 'data', persistentVolumeClaim: { claimName: `c-${i}` } }],
  },
});

describe.skipIf(skip !== undefined)(
  'scaled-out control plane: etcd member, API server and leaders killed mid-work',
  () => {
    let dir: string;
    let etcd: EtcdCluster & { readonly root: string };
    let csi: FaultProxy;
    let balancer: Awaited<ReturnType<typeof startBalancer>>;
    /** Clients of server 1 and 2 (server 2 survives). */
    let clients: RestClient[] = [];
    let survivor: RestClient;
    let source: SnapshotSource;
    const procs: Proc[] = [];
    const kubeconfigs: string[] = [];
    const stopInformer = new AbortController();
    /** VolumeAttachments deleted (seen by an informer on the surviving server). */
    const vaDeleted: string[] = [];
    /**
     * CreateVolume calls pass until the first PV exists, then wait for the first kills;
     * ControllerPublishVolume calls pass until the first VolumeAttachment is attached, then wait for
     * the second kills (seen by informers: a call that passed may still fail to produce either).
     */
    const createGate = gate();
    const publishGate = gate();
    let pvSeen = false;
    let attachedSeen = false;
    let nodeRoot: string;
    let driverState: string;

    let stopping = false;
    /** Exits of supervised processes that the test did not cause (each restarted, as its supervisor would). */
    const restarts: string[] = [];

    const log = (name: string): number => openSync(join(dir, 'logs', `${name}.log`), 'a');
    /**
     * Starts a process with its output in logs/<name>.log. A `supervised` one is started again a
     * second after it exits by itself, as a kubelet restarts a container (the registrar, as
     * node-driver-registrar does, exits when the node refuses its registration).
     */
    const spawnLogged = (name: string, args: string[], server: number, supervised = false): Proc => {
      const out = log(name);
      const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', out, 'pipe'] });
      closeSync(out);
      let err = '';
      child.stderr!.on('data', (d: Buffer) => {
        err += d.toString();
        writeFileSync(join(dir, 'logs', `${name}.log`), d, { flag: 'a' });
      });
      const p = {
        name,
        child,
        exit: new Promise<number | null>((r) => child.once('exit', (code) => r(code))),
        server,
        stderr: () => err,
      };
      procs.push(p);
      if (supervised) {
        void p.exit.then((code) => {
          if (stopping) return;
          restarts.push(`${name}(${code})`);
          setTimeout(() => (stopping ? undefined : spawnLogged(name, args, server, true)), 1_000);
        });
      }
      return p;
    };
    const alive = (p: Proc): boolean => p.child.exitCode === null && p.child.signalCode === null;

    const candidate = (kind: 'controllers' | 'csi-sidecar', name: string, server: number): Proc => {
      const p = kind === 'controllers' ? 'leader-elect' : 'leader-election';
      const timing = Object.entries(TIMINGS).flatMap(([k, v]) => [`--${p}-${k}`, v]);
      const kc = kubeconfigs[server]!;
      const args =
        kind === 'controllers'
          ? ['controllers', '--kubeconfig', kc, '--leader-elect', ...timing]
          : [
              'csi-sidecar',
              '--csi-address',
              `unix://${join(nodeRoot, 'plugins', DRIVER, 'csi.sock')}`,
              '--kubeconfig',
              kc,
              '--leader-election',
              '--timeout',
              '5s',
              ...timing,
            ];
      return spawnLogged(name, args, server);
    };
    const group = (prefix: string): Proc[] => procs.filter((p) => p.name.startsWith(prefix) && alive(p));
    /** The one live process of the group that says it became leader (waits for it). */
    const leaderOf = (prefix: string): Promise<Proc> =>
      vi.waitFor(
        () => {
          const l = group(prefix).filter((p) => p.stderr().includes('became leader'));
          if (l.length !== 1) throw new Error(`${prefix} leaders: ${l.map((p) => p.name).join(',') || 'none'}`);
          return l[0]!;
        },
        { timeout: 60_000, interval: 100 },
      );

    /** A snapshot through the surviving server; undefined while it cannot answer (etcd electing). */
    const snapshot = (): Promise<Snapshot | undefined> => takeSnapshot(source).catch(() => undefined);

    const serverUrl = (child: ChildProcess, name: string): Promise<string> =>
      new Promise((res, rej) => {
        const timer = setInterval(() => {
          const m = /API server (https:\/\/\S+) /.exec(readFileSync(join(dir, 'logs', `${name}.log`), 'utf8'));
          if (m) {
            clearInterval(timer);
            res(m[1]!);
          }
        }, 50);
        child.once('exit', (code) => {
          clearInterval(timer);
          rej(new Error(`${name} exited with ${code}`));
        });
      });

    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'stowage-scaleout-'));
      mkdirSync(join(dir, 'logs'));
      nodeRoot = join(dir, 'node');
      driverState = join(dir, 'driver');
      mkdirSync(join(nodeRoot, 'plugins', DRIVER), { recursive: true });
      etcd = await startEtcdCluster(3);

      // Two API servers on the three members; the second shares the first one's pki/ (CA, admin token).
      const ports: number[] = [];
      for (const i of [1, 2]) {
        const certDir = join(dir, `api-${i}`);
        if (i > 1) cpSync(join(dir, 'api-1', 'pki'), join(certDir, 'pki'), { recursive: true });
        const port = await freeLoopbackPort();
        ports.push(port);
        const s = spawnLogged(
          `server-${i}`,
          [
            'server',
            '--etcd-servers',
            etcd.endpoints.join(','),
            '--bind-address',
            '127.0.0.1',
            '--secure-port',
            String(port),
            '--cert-dir',
            certDir,
          ],
          i - 1,
        );
        await serverUrl(s.child, `server-${i}`);
        kubeconfigs.push(join(certDir, 'kubeconfig'));
      }
      clients = await Promise.all(
        kubeconfigs.map(async (k) => new RestClient({ ...(await loadKubeconfig(k)), timeoutMs: 10_000 })),
      );
      survivor = clients[1]!;
      source = { client: survivor, dataDir: dir, nodeRoot, driverStateDir: driverState };
      // The node reaches the control plane through a balancer over both servers.
      balancer = await startBalancer(ports);
      const balanced = join(dir, 'balanced.kubeconfig');
      writeFileSync(
        balanced,
        readFileSync(kubeconfigs[0]!, 'utf8').replace(
          `https://127.0.0.1:${ports[0]}`,
          `https://127.0.0.1:${balancer.port}`,
        ),
      );
      expect(readFileSync(balanced, 'utf8')).toContain(`:${balancer.port}`);

      // The driver, with attach, behind the recording proxy that holds CreateVolume and
      // ControllerPublishVolume calls once the first of each took effect, until the kills of their phase.
      const csiDir = join(nodeRoot, 'plugins', DRIVER);
      spawnLogged(
        'driver',
        [
          'csi-hostpath',
          '--endpoint',
          `unix://${join(csiDir, 'driver.sock')}`,
          '--node-id',
          NODE_NAME,
          '--state-dir',
          driverState,
          '--enable-attach',
        ],
        -1,
        true,
      );
      // Everything that talks to the driver starts once it serves (a sidecar exits when the driver
      // does not answer at start, as external-provisioner does).
      await vi.waitFor(() => expect(existsSync(join(csiDir, 'driver.sock'))).toBe(true), {
        timeout: 30_000,
        interval: 50,
      });
      csi = await startFaultProxy({
        socket: join(csiDir, 'csi.sock'),
        upstream: join(csiDir, 'driver.sock'),
        decide: async (method) => {
          if (method === 'CreateVolume' && pvSeen) await createGate.wait;
          if (method === 'ControllerPublishVolume' && attachedSeen) await publishGate.wait;
          return undefined;
        },
      });
      spawnLogged(
        'registrar',
        [
          'csi-registrar',
          '--csi-address',
          join(csiDir, 'csi.sock'),
          '--kubelet-registration-path',
          join(csiDir, 'csi.sock'),
          '--plugin-registration-path',
          join(nodeRoot, 'plugins_registry'),
        ],
        -1,
        true,
      );
      spawnLogged(
        'node',
        [
          'node',
          '--kubeconfig',
          balanced,
          '--node-name',
          NODE_NAME,
          '--root-dir',
          nodeRoot,
          '--backoff-cap',
          '2s',
          '--port',
          '0',
        ],
        -1,
        true,
      );
      candidate('controllers', 'ctrl-a', 0);
      candidate('controllers', 'ctrl-b', 1);
      candidate('csi-sidecar', 'side-a', 0);
      candidate('csi-sidecar', 'side-b', 1);
      await survivor.resource('CSIDriver').create({
        apiVersion: 'storage.k8s.io/v1',
        kind: 'CSIDriver',
        metadata: { name: DRIVER },
        spec: { attachRequired: true, podInfoOnMount: true, volumeLifecycleModes: ['Persistent'] },
      });
      await survivor.resource('StorageClass').create({
        apiVersion: 'storage.k8s.io/v1',
        kind: 'StorageClass',
        metadata: { name: 'scale' },
        provisioner: DRIVER,
        reclaimPolicy: 'Delete',
        volumeBindingMode: 'Immediate',
      });

      // The node is ready for work once its driver is registered (CSINode lists it).
      await vi.waitFor(
        async () =>
          expect((await survivor.resource('CSINode').get(NODE_NAME)).spec.drivers?.map((d) => d.name)).toEqual([
            DRIVER,
          ]),
        { timeout: 60_000, interval: 100 },
      );

      const vas = informerFor(survivor, 'VolumeAttachment');
      const pvs = informerFor(survivor, 'PersistentVolume');
      const sawAttached = (a: VolumeAttachment): void => void (attachedSeen ||= a.status?.attached === true);
      vas.addEventHandler({
        onAdd: sawAttached,
        onUpdate: (_, a) => sawAttached(a),
        onDelete: (o) => vaDeleted.push(`${objectOf(o).metadata?.name}${isTombstone(o) ? ' (tombstone)' : ''}`),
      });
      pvs.addEventHandler({ onAdd: () => (pvSeen = true) });
      for (const i of [vas, pvs]) void i.run(stopInformer.signal);
      await Promise.all([vas.waitForSync(stopInformer.signal), pvs.waitForSync(stopInformer.signal)]);
    }, 120_000);

    afterAll(async () => {
      stopping = true;
      createGate.open();
      publishGate.open();
      stopInformer.abort();
      // Each step runs even when an earlier one failed, so that nothing is left behind.
      const errors: unknown[] = [];
      const step = async (f: () => unknown): Promise<void> => {
        try {
          await f();
        } catch (e) {
          errors.push(e);
        }
      };
      await step(async () => {
        for (const p of [...procs].reverse()) p.child.kill('SIGTERM');
        const timer = setTimeout(() => procs.forEach((p) => p.child.kill('SIGKILL')), 15_000);
        await Promise.all(procs.map((p) => p.exit));
        clearTimeout(timer);
      });
      await step(() => csi?.stop());
      await step(() => balancer?.close());
      await step(() => clients.forEach((c) => c.close()));
      await step(() => etcd?.stop());
      let left: string[] = [];
      if (dir) {
        // Whatever a failed run left mounted is undone; a passing run left nothing (checked below).
        await step(async () => {
          left = await mountPointsUnder(dir);
          for (const m of left) await unmount(m).catch(() => undefined);
        });
        rmSync(dir, { recursive: true, force: true });
      }
      if (errors.length > 0) throw errors[0];
      expect(left).toEqual([]);
      expect(procs.filter(alive).map((p) => p.name)).toEqual([]);
      if (etcd) expect(existsSync(etcd.root)).toBe(false);
    }, 60_000);

    /** The last lines of every process's log, for a failure report. */
    const tails = (): string =>
      `restarted by their supervisor: ${restarts.join(', ') || 'none'}\n` +
      procs
        .map(
          (p) =>
            `--- ${p.name} (${alive(p) ? 'alive' : `exited ${p.child.exitCode ?? p.child.signalCode}`}) ---\n${readFileSync(
              join(dir, 'logs', `${p.name}.log`),
              'utf8',
            )
              .trimEnd()
              .split('\n')
              .slice(-15)
              .join('\n')}`,
        )
        .join('\n');

    it('converges with every claim provisioned and bound once, every volume attached and mounted, no attachment lost', async () => {
      onTestFailed(() => console.error(tails()));
      const ctrlLeader = await leaderOf('ctrl-');
      await leaderOf('side-');
      await Promise.all(
        Array.from({ length: CLAIMS }, (_, i) => survivor.resource('PersistentVolumeClaim').create(claim(i))),
      );
      await Promise.all(Array.from({ length: PODS }, (_, i) => survivor.resource('Pod').create(pod(i))));

      // Mid-provisioning and binding: the first PVs exist, the other CreateVolume calls are held.
      await vi.waitFor(
        async () => expect((await survivor.resource('PersistentVolume').list()).items.length).toBeGreaterThan(0),
        { timeout: 30_000, interval: 50 },
      );
      const etcdLeader = await raftLeader(etcd.members);
      ctrlLeader.child.kill('SIGKILL');
      await Promise.all([etcdLeader.halt('SIGKILL'), ctrlLeader.exit]);
      const pvsAtFirstKill = (
        await vi.waitFor(() => survivor.resource('PersistentVolume').list(), { timeout: 30_000, interval: 200 })
      ).items.length;
      createGate.open();

      // Mid-attach: the controllers' new leader has taken over and every pod has its
      // VolumeAttachment; the first is attached, the other ControllerPublish calls are held.
      await leaderOf('ctrl-');
      const attachedAtSecondKill = await vi.waitFor(
        async () => {
          const vas = (await survivor.resource('VolumeAttachment').list()).items;
          expect(vas).toHaveLength(PODS);
          const attached = vas.filter((a) => a.status?.attached).length;
          expect(attached).toBeGreaterThan(0);
          return attached;
        },
        { timeout: 60_000, interval: 100 },
      );
      const sideNow = await leaderOf('side-');
      const server1 = procs.find((p) => p.name === 'server-1')!;
      for (const p of [sideNow, server1]) p.child.kill('SIGKILL');
      await Promise.all([sideNow.exit, server1.exit]);
      await etcdLeader.restart();
      // An operator restarts against the surviving server what was configured for the dead one (a
      // leader among them would lose its lease and exit, the others retry the dead server for
      // ever: a kubeconfig names one server), and replaces the killed leaders.
      const onDead = procs.filter((p) => p.server === 0 && p.name !== 'server-1' && alive(p));
      for (const p of onDead) p.child.kill('SIGTERM');
      await Promise.all(onDead.map((p) => p.exit));
      candidate('controllers', 'ctrl-c', 1);
      candidate('csi-sidecar', 'side-c', 1);
      publishGate.open();

      await leaderOf('ctrl-');
      await leaderOf('side-');
      const converged = await vi.waitFor(
        async () => {
          const s = await snapshot();
          const last = !s
            ? ['no snapshot']
            : s.claims.length !== CLAIMS || s.pods.length !== PODS
              ? ['objects missing']
              : checkSteady(s, { attach: true });
          if (last.length > 0) throw new Error(`not converged:\n${last.slice(0, 10).join('\n')}`);
          return s!;
        },
        { timeout: 90_000, interval: 500 },
      );
      // The kills did land mid-work.
      expect(pvsAtFirstKill).toBeLessThan(CLAIMS);
      expect(attachedAtSecondKill).toBeLessThan(PODS);

      // Exactly once: one PV per claim, one driver volume per PV, one attached VolumeAttachment per
      // pod's volume and the driver's published set equal to them.
      const handles = new Map(
        converged.volumes.map((pv) => [pv.metadata?.name ?? '', pv.spec?.csi?.volumeHandle ?? '']),
      );
      expect(converged.volumes).toHaveLength(CLAIMS);
      expect(new Set(converged.volumes.map((v) => v.spec?.claimRef?.uid)).size).toBe(CLAIMS);
      expect(Object.keys(converged.driver.volumes ?? {}).sort()).toEqual([...handles.values()].sort());
      const podPvs = converged.pods.map(
        (p) =>
          converged.claims.find((c) => c.metadata?.name === p.spec?.volumes?.[0]?.persistentVolumeClaim?.claimName)
            ?.spec?.volumeName,
      );
      const vaPvs = converged.attachments.map((a) => a.spec.source.persistentVolumeName);
      expect(vaPvs.sort()).toEqual([...podPvs].sort());
      expect(converged.attachments.every((a) => a.status?.attached && a.spec.nodeName === NODE_NAME)).toBe(true);
      const published = Object.entries(converged.driver.volumes ?? {})
        .filter(([, v]) => Object.keys(v.attachments).length > 0)
        .map(([id]) => id);
      expect(published.sort()).toEqual(podPvs.map((pv) => handles.get(pv ?? '')).sort());
      // No attachment lost: nothing detached, unstaged, unpublished or deleted, no VolumeAttachment deleted.
      expect(csi.calls.filter((m) => UNDOING.includes(m))).toEqual([]);
      expect(vaDeleted).toEqual([]);
      expect(converged.attachments.filter((a) => a.metadata?.deletionTimestamp).map((a) => a.metadata?.name)).toEqual(
        [],
      );
    }, 180_000);

    it('then tears down cleanly: pods and claims deleted → nothing left in the API, the driver or the mount table', async () => {
      onTestFailed(() => console.error(tails()));
      await Promise.all(
        Array.from({ length: PODS }, (_, i) => survivor.resource('Pod').delete(`p-${i}`, { namespace: 'default' })),
      );
      await vi.waitFor(
        async () => expect((await survivor.resource('Pod').list({ namespace: 'default' })).items).toEqual([]),
        { timeout: 60_000, interval: 250 },
      );
      await Promise.all(
        Array.from({ length: CLAIMS }, (_, i) =>
          survivor.resource('PersistentVolumeClaim').delete(`c-${i}`, { namespace: 'default' }),
        ),
      );
      await vi.waitFor(
        async () => {
          const s = await snapshot();
          expect(s ? checkEmpty(s) : ['no snapshot']).toEqual([]);
        },
        { timeout: 60_000, interval: 500 },
      );
    }, 120_000);
  },
);
