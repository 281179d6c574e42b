/**
 * B1: PV binding throughput. Against a `stowage up` child process, creates N PersistentVolumes and
 * N PersistentVolumeClaims (mixed sizes and classes, every claim has exactly one matching volume
 * size) and reports the time from the first claim created until every claim is Bound.
 *   node dist/bench/bind.js [N...]   (default: 1000 10000)
 */
import { peakRssMiB, pool, startBenchServer, streamWatch } from './harness.js';

const sizes = process.argv
  .slice(2)
  .map(Number)
  .filter((n) => n > 0);
const CLASSES = ['', 'gold', 'silver', 'bronze'];
const CONCURRENCY = 32;

for (const N of sizes.length ? sizes : [1000, 10_000]) {
  // Static binding needs no node: the API server and the controllers (in one process unless STOWAGE_BENCH_SPLIT).
  const s = await startBenchServer(['--no-node']);
  try {
    const t0 = performance.now();
    await pool(N, CONCURRENCY, async (i) => {
      const r = await s.req('POST', '/api/v1/persistentvolumes', {
        apiVersion: 'v1',
        kind: 'PersistentVolume',
        metadata: { name: `pv-${i}` },
        spec: {
          capacity: { storage: `${1 + (i % 10)}Gi` },
          accessModes: ['ReadWriteOnce'],
          storageClassName: CLASSES[i % CLASSES.length],
          persistentVolumeReclaimPolicy: 'Retain',
          hostPath: { path: `/tmp/bench-bind/${i}` },
        },
      });
      if (r.status !== 201) throw new Error(`pv ${i}: ${r.status} ${r.text}`);
    });
    const pvSecs = (performance.now() - t0) / 1000;
    let bound = 0;
    let resolveAll: () => void = () => undefined;
    const all = new Promise<void>((r) => (resolveAll = r));
    const seen = new Set<string>();
    const w = streamWatch(s, '/api/v1/namespaces/default/persistentvolumeclaims?watch=true', (ev) => {
      const name = ev.object.metadata?.name ?? '';
      if (ev.object.status?.phase === 'Bound' && !seen.has(name)) {
        seen.add(name);
        if (++bound === N) resolveAll();
      }
    });
    const t1 = performance.now();
    await pool(N, CONCURRENCY, async (i) => {
      const r = await s.req('POST', '/api/v1/namespaces/default/persistentvolumeclaims', {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: { name: `claim-${i}` },
        spec: {
          accessModes: ['ReadWriteOnce'],
          resources: { requests: { storage: `${1 + (i % 10)}Gi` } },
          storageClassName: CLASSES[i % CLASSES.length],
        },
      });
      if (r.status !== 201) throw new Error(`pvc ${i}: ${r.status} ${r.text}`);
    });
    const createdSecs = (performance.now() - t1) / 1000;
    await all;
    const secs = (performance.now() - t1) / 1000;
    w.stop();
    console.log(
      `B1 bind: N=${N} all-bound=${secs.toFixed(2)}s pairs/s=${Math.round(N / secs)} (claims created in ${createdSecs.toFixed(2)}s; ${N} PVs created in ${pvSecs.toFixed(2)}s) server-peak-rss=${peakRssMiB(s.child.pid!)}MiB`,
    );
  } finally {
    await s.stop();
  }
}
