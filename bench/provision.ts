/**
 * B2: dynamic provisioning throughput. In one process: the API server with the PV controller
 * (startTestApiServer), the built-in hostpath CSI driver, the CSI sidecar and the scheduler.
 *   pods mode (default): N claims of a WaitForFirstConsumer class and N pods using them, created at
 *     once; measured until every pod is bound to a node (the scheduler binds a pod only after its
 *     claims are provisioned and Bound). No node agent runs, so pods do not reach Running.
 *   claims mode: N claims of an Immediate class, until every claim is Bound.
 * Prints p50/p99 of per-object latency (created → bound) and volumes/s.
 *   node dist/bench/provision.js [N...]       (default: 100 1000)
 *   B2_MODES=claims,pods node dist/bench/provision.js
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestApiServer } from '../src/api/testing.js';
import { informerFor, loadKubeconfig, RestClient } from '../src/client/index.js';
import { runScheduler } from '../src/controllers/scheduler/run.js';
import { startHostpathDriver, TOPOLOGY_KEY } from '../src/csi/hostpath/index.js';
import { runCsiSidecar } from '../src/csi/sidecar/sidecar.js';
import { setLogLevel } from '../src/util/log.js';
import { percentile, pool } from './harness.js';

setLogLevel('error');
const sizes = process.argv.slice(2).map(Number).filter((n) => n > 0);
const modes = (process.env.B2_MODES ?? 'claims,pods').split(',').filter((m) => m === 'claims' || m === 'pods');
const CONCURRENCY = 32;
const DRIVER = 'hostpath.csi.stowage.io';
const NODE = 'bench-node';

async function run(mode: 'claims' | 'pods', N: number): Promise<void> {
  const srv = await startTestApiServer();
  const client = new RestClient(await loadKubeconfig(srv.kubeconfigPath));
  const dir = mkdtempSync(join(tmpdir(), 'stowage-b2-'));
  const stop = new AbortController();
  const running: Promise<unknown>[] = [];
  try {
    const driver = await startHostpathDriver({ endpoint: join(dir, 'csi.sock'), nodeId: NODE, stateDir: join(dir, 'state'), signal: stop.signal });
    running.push(driver.done);
    await client.resource('Node').create({ metadata: { name: NODE, labels: { [TOPOLOGY_KEY]: NODE, 'kubernetes.io/hostname': NODE } } });
    const alloc = { cpu: '1000', memory: '1000Gi', pods: String(N + 10) };
    await client.resource('Node').patchStatus(NODE, 'merge', {
      status: { capacity: alloc, allocatable: alloc, conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', lastHeartbeatTime: new Date().toISOString(), lastTransitionTime: new Date().toISOString() }] },
    });
    await client.resource('CSINode').create({ metadata: { name: NODE }, spec: { drivers: [{ name: DRIVER, nodeID: NODE, topologyKeys: [TOPOLOGY_KEY] }] } });
    await client.resource('StorageClass').create({
      metadata: { name: 'b2' },
      provisioner: DRIVER,
      reclaimPolicy: 'Delete',
      volumeBindingMode: mode === 'pods' ? 'WaitForFirstConsumer' : 'Immediate',
    });
    running.push(runCsiSidecar({ client, csiAddress: join(dir, 'csi.sock'), signal: stop.signal, workers: 16 }));
    if (mode === 'pods') running.push(runScheduler({ client, signal: stop.signal }));

    const created = new Map<string, number>();
    const latencies: number[] = [];
    let resolveAll: () => void = () => undefined;
    const all = new Promise<void>((r) => (resolveAll = r));
    const done = (name: string): void => {
      const t = created.get(name);
      if (t === undefined) return;
      created.delete(name);
      latencies.push(performance.now() - t);
      if (latencies.length === N) resolveAll();
    };
    const watchAc = new AbortController();
    if (mode === 'pods') {
      const inf = informerFor(client, 'Pod', { namespace: 'default' });
      const seen = (p: { metadata?: { name?: string }; spec?: { nodeName?: string } }): void => {
        if (p.spec?.nodeName) done(p.metadata?.name ?? '');
      };
      inf.addEventHandler({ onAdd: seen, onUpdate: (_, p) => seen(p) });
      running.push(inf.run(watchAc.signal));
      await inf.waitForSync();
    } else {
      const inf = informerFor(client, 'PersistentVolumeClaim', { namespace: 'default' });
      const seen = (c: { metadata?: { name?: string }; status?: { phase?: string } }): void => {
        if (c.status?.phase === 'Bound') done(c.metadata?.name ?? '');
      };
      inf.addEventHandler({ onAdd: seen, onUpdate: (_, c) => seen(c) });
      running.push(inf.run(watchAc.signal));
      await inf.waitForSync();
    }

    const t0 = performance.now();
    await pool(N, CONCURRENCY, async (i) => {
      const claimName = `c-${i}`;
      if (mode === 'claims') created.set(claimName, performance.now());
      await client.resource('PersistentVolumeClaim').create({
        metadata: { name: claimName, namespace: 'default' },
        spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'b2', resources: { requests: { storage: '1Mi' } } },
      });
      if (mode === 'pods') {
        created.set(`p-${i}`, performance.now());
        await client.resource('Pod').create({
          metadata: { name: `p-${i}`, namespace: 'default' },
          spec: { containers: [{ name: 'c', image: 'busybox' }], volumes: [{ name: 'v', persistentVolumeClaim: { claimName } }] },
        });
      }
    });
    const createdSecs = (performance.now() - t0) / 1000;
    await all;
    const secs = (performance.now() - t0) / 1000;
    watchAc.abort();
    latencies.sort((a, b) => a - b);
    const what = mode === 'pods' ? 'WFFC claims+pods → pods bound to node' : 'Immediate claims → Bound';
    console.log(
      `B2 provision (${what}): N=${N} all=${secs.toFixed(2)}s volumes/s=${Math.round(N / secs)} p50=${(percentile(latencies, 50) / 1000).toFixed(2)}s p99=${(percentile(latencies, 99) / 1000).toFixed(2)}s (created in ${createdSecs.toFixed(2)}s; one process)`,
    );
  } finally {
    stop.abort();
    await Promise.allSettled(running);
    client.close();
    await srv.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

for (const mode of modes) {
  for (const N of sizes.length ? sizes : [100, 1000]) await run(mode, N);
}
