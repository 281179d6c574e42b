/**
 * B3 podstart: pods with bound claims on one node, from pod creation to Running, through the real
 * volume manager, the built-in hostpath CSI driver and real mounts (needs root).
 * Scenarios: 100 pods × 1 claim, and 1 pod × 100 claims. Prints one result line with p50/p99.
 * `node dist/bench/podstart.js containers`: 100 pods × 1 claim until every container runs and is
 * ready, on `stowage up` with its embedded containerd (podstart-containers.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { ensureNodeToken } from '../src/cli/nodetoken.js';
import { startTestApiServer } from '../src/cli/testing.test-kit.js';
import type { RestClient } from '../src/client/rest.js';
import { CsiClient } from '../src/csi/client.js';
import { DEFAULT_DRIVER_NAME, startHostpathDriver } from '../src/csi/hostpath/index.js';
import { mountsUnder } from '../src/mount/mountinfo.js';
import { startVolumeManager } from '../src/node/volumemanager/volume-manager.js';
import { setLogLevel } from '../src/util/log.js';
import { MetricsRegistry } from '../src/util/metrics.js';
import { podstartContainers } from './podstart-containers.js';
import { poll, podsRunningAt } from './harness.js';

const NODE = 'bench-node';
const NS = 'default';

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? NaN;
}

async function claims(client: RestClient, csi: CsiClient, prefix: string, n: number): Promise<string[]> {
  const names = Array.from({ length: n }, (_, i) => `${prefix}-${i}`);
  await Promise.all(
    names.map(async (name) => {
      const v = await csi.createVolume({
        name,
        capacityRange: { requiredBytes: 1 << 20 },
        volumeCapabilities: [{ mount: {}, accessMode: { mode: 'SINGLE_NODE_WRITER' } }],
      });
      await client.resource('PersistentVolume').create({
        metadata: { name: `pv-${name}` },
        spec: {
          capacity: { storage: '1Mi' },
          accessModes: ['ReadWriteOnce'],
          storageClassName: '',
          csi: { driver: DEFAULT_DRIVER_NAME, volumeHandle: v.volume?.volumeId ?? '' },
        },
      });
      await client.resource('PersistentVolumeClaim').create({
        metadata: { name, namespace: NS },
        spec: {
          accessModes: ['ReadWriteOnce'],
          storageClassName: '',
          volumeName: `pv-${name}`,
          resources: { requests: { storage: '1Mi' } },
        },
      });
    }),
  );
  await poll('claims bound', async () => {
    const l = await client.resource('PersistentVolumeClaim').list({ namespace: NS });
    return names.every((n) => l.items.some((c) => c.metadata?.name === n && c.status?.phase === 'Bound'));
  });
  return names;
}

function pod(name: string, claimNames: string[]): Pod {
  return {
    metadata: { name, namespace: NS },
    spec: {
      nodeName: NODE,
      containers: [{ name: 'app', image: 'busybox' }],
      volumes: claimNames.map((c, i) => ({ name: `v${i}`, persistentVolumeClaim: { claimName: c } })),
    },
  };
}

async function main(): Promise<void> {
  if (process.getuid?.() !== 0) throw new Error('bench/podstart needs root (real mounts)');
  setLogLevel('error');
  const dir = mkdtempSync(path.join(tmpdir(), 'stowage-b3-'));
  const api = await startTestApiServer();
  const client = api.plane.client;
  const stop = new AbortController();
  const socket = path.join(dir, 'csi.sock');
  const driver = await startHostpathDriver({
    endpoint: socket,
    nodeId: NODE,
    stateDir: path.join(dir, 'hostpath'),
    signal: stop.signal,
  });
  const csi = new CsiClient({ endpoint: socket });
  await client
    .resource('CSIDriver')
    .create({ metadata: { name: DEFAULT_DRIVER_NAME }, spec: { attachRequired: false } });
  const metrics = new MetricsRegistry();
  // B3_NODE_IDENTITY=1: the volume manager runs as system:node:<NODE> (Node authorizer, GET caches).
  const asNode = process.env.B3_NODE_IDENTITY === '1';
  const vmClient = asNode ? api.plane.localClient(await ensureNodeToken(client, NODE)) : client;
  const vm = await startVolumeManager({
    client: vmClient,
    nodeScopedReads: asNode,
    nodeName: NODE,
    rootDir: path.join(dir, 'kubelet'),
    drivers: { endpoint: () => socket },
    signal: stop.signal,
    metrics,
    ...(process.env.B3_CONC ? { maxConcurrentCalls: Number(process.env.B3_CONC) } : {}),
  });

  const created = new Map<string, number>();
  const running = await podsRunningAt(client, { fieldSelector: `spec.nodeName=${NODE}` }, stop.signal);

  const scenario = async (label: string, nPods: number, perPod: number): Promise<number[]> => {
    const names = await claims(client, csi, label, nPods * perPod);
    const podNames = Array.from({ length: nPods }, (_, i) => `${label}-pod-${i}`);
    await Promise.all(
      podNames.map(async (n, i) => {
        created.set(n, performance.now());
        await client.resource('Pod').create(pod(n, names.slice(i * perPod, (i + 1) * perPod)));
      }),
    );
    await poll(`${label} pods Running`, () => podNames.every((n) => running.has(n)));
    const lat = podNames.map((n) => running.get(n)! - created.get(n)!);
    await Promise.all(podNames.map((n) => client.resource('Pod').delete(n, { namespace: NS })));
    await poll(
      `${label} pods gone`,
      async () => (await client.resource('Pod').list({ namespace: NS })).items.length === 0,
    );
    await poll(`${label} unmounted`, async () => (await mountsUnder(dir)).length === 0);
    return lat;
  };

  const n = Number(process.env.B3_N ?? 100);
  const many = await scenario('b3a', n, 1);
  const wide = await scenario('b3b', 1, n);
  if (process.env.B3_DEBUG)
    console.error(
      metrics
        .render()
        .split('\n')
        .filter((l) => /_(sum|count)\{/.test(l))
        .join('\n'),
    );
  await vm.stop();
  if (vmClient !== client) vmClient.close();
  csi.close();
  stop.abort();
  await driver.done;
  await api.close();
  rmSync(dir, { recursive: true, force: true });
  const f = (x: number): string => `${Math.round(x)}ms`;
  console.log(
    `B3 podstart: 100 pods x 1 claim p50=${f(pct(many, 50))} p99=${f(pct(many, 99))}; 1 pod x 100 claims p50=${f(pct(wide, 50))} p99=${f(pct(wide, 99))} (create → Running, hostpath CSI, real mounts${asNode ? ', as system:node' : ''})`,
  );
}

async function containers(): Promise<void> {
  const n = Number(process.env.B3_N ?? 100);
  const r = await podstartContainers(n);
  const f = (x: number): string => `${Math.round(x)}ms`;
  console.log(
    `B3 podstart (containers): ${n} pods x 1 claim p50=${f(r.p50)} p99=${f(r.p99)} (create → every container running and ready; embedded containerd, busybox from a loopback registry, hostpath CSI)`,
  );
}

(process.argv[2] === 'containers' ? containers() : main()).then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
