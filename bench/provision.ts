/**
 * B2: dynamic provisioning, end to end. Against a `stowage up` child process (API server,
 * controllers and scheduler, node agent with its volume manager, the built-in hostpath driver with
 * its registrar and sidecar), creates N claims of a WaitForFirstConsumer class and N pods using
 * them, all at once, and measures each pod from creation to Running (placed, provisioned, bound,
 * staged, published with real mounts). Needs root. Prints p50/p99 and volumes/s.
 *   node dist/bench/provision.js [N...]   (default: 100 1000)
 */
import { readFileSync } from 'node:fs';
import { percentile, pool, startBenchServer, streamWatch } from './harness.js';

const sizes = process.argv
  .slice(2)
  .map(Number)
  .filter((n) => n > 0);
const CONCURRENCY = 32;

for (const N of sizes.length ? sizes : [100, 1000]) {
  const s = await startBenchServer(['--node-name', 'bench']);
  try {
    // The node must have registered the driver before pods can be placed on it.
    for (let i = 0; i < 200; i++) {
      const r = await s.req('GET', '/apis/storage.k8s.io/v1/csinodes/bench');
      if (r.status === 200 && (JSON.parse(r.text) as { spec?: { drivers?: unknown[] } }).spec?.drivers?.length) break;
      await new Promise((res) => setTimeout(res, 50));
    }
    await s.req('POST', '/apis/storage.k8s.io/v1/storageclasses', {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      metadata: { name: 'wffc' },
      provisioner: 'hostpath.csi.stowage.io',
      volumeBindingMode: 'WaitForFirstConsumer',
    });
    const created = new Map<string, number>();
    const latency: number[] = [];
    let resolveAll: () => void = () => undefined;
    const all = new Promise<void>((r) => (resolveAll = r));
    const w = streamWatch(s, '/api/v1/namespaces/default/pods?watch=true', (ev) => {
      const name = ev.object.metadata?.name ?? '';
      const t = created.get(name);
      if (ev.object.status?.phase === 'Running' && t !== undefined) {
        created.delete(name);
        latency.push(performance.now() - t);
        if (latency.length === N) resolveAll();
      }
    });
    const t0 = performance.now();
    await pool(N, CONCURRENCY, async (i) => {
      const claim = await s.req('POST', '/api/v1/namespaces/default/persistentvolumeclaims', {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: { name: `data-${i}` },
        spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'wffc', resources: { requests: { storage: '1Mi' } } },
      });
      if (claim.status !== 201) throw new Error(`claim ${i}: ${claim.status} ${claim.text}`);
      created.set(`app-${i}`, performance.now());
      const pod = await s.req('POST', '/api/v1/namespaces/default/pods', {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: `app-${i}` },
        spec: {
          containers: [{ name: 'c', image: 'busybox' }],
          volumes: [{ name: 'data', persistentVolumeClaim: { claimName: `data-${i}` } }],
        },
      });
      if (pod.status !== 201) throw new Error(`pod ${i}: ${pod.status} ${pod.text}`);
    });
    await all;
    const secs = (performance.now() - t0) / 1000;
    w.stop();
    latency.sort((a, b) => a - b);
    console.log(
      `B2 provision: N=${N} WaitForFirstConsumer claims+pods → all Running in ${secs.toFixed(2)}s, volumes/s=${Math.round(N / secs)}, ` +
        `pod p50=${(percentile(latency, 50) / 1000).toFixed(2)}s p99=${(percentile(latency, 99) / 1000).toFixed(2)}s (stowage up, real mounts)`,
    );
    // Tear down through the API so no mount outlives the bench: pods first, then claims.
    await s.req('DELETE', '/api/v1/namespaces/default/pods');
    for (let i = 0; i < 600; i++) {
      const r = await s.req('GET', '/api/v1/namespaces/default/pods?limit=1');
      if ((JSON.parse(r.text) as { items: unknown[] }).items.length === 0) break;
      await new Promise((res) => setTimeout(res, 100));
    }
    await s.req('DELETE', '/api/v1/namespaces/default/persistentvolumeclaims');
    // Stop only once the node has unstaged everything (the CSI volumes are then deleted too).
    for (let i = 0; i < 1200 && readFileSync('/proc/self/mountinfo', 'utf8').includes(s.dataDir); i++)
      await new Promise((res) => setTimeout(res, 100));
  } finally {
    await s.stop();
  }
}
