/**
 * B1 end to end, as the issue measures it: against `stowage up --no-container-runtime` (API server,
 * controllers and node agent in one child process), C HTTPS clients create N PersistentVolumes, then N
 * PersistentVolumeClaims (each claim matches exactly one volume size and class); the clock runs from
 * the first PV created until every claim is seen Bound on a watch.
 *   node dist/bench/bind-e2e.js [N...]   (default: 1000 10000; C=16, or B1_CLIENTS)
 */
import { currentRssMiB, peakRssMiB, pool, startBenchServer, streamWatch } from './harness.js';

const sizes = process.argv
  .slice(2)
  .map(Number)
  .filter((n) => n > 0);
const CLASSES = ['', 'gold', 'silver', 'bronze'];
const CLIENTS = Number(process.env.B1_CLIENTS ?? 16);

for (const N of sizes.length ? sizes : [1000, 10_000]) {
  const s = await startBenchServer((process.env.B1_UP_ARGS ?? '').split(' ').filter(Boolean), {
    controllersProcess: false,
  });
  try {
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
    const t0 = performance.now();
    await pool(N, CLIENTS, async (i) => {
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
    await pool(N, CLIENTS, async (i) => {
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
    const createdSecs = (performance.now() - t0) / 1000;
    await all;
    const secs = (performance.now() - t0) / 1000;
    w.stop();
    const pid = s.child.pid ?? 0;
    console.log(
      `B1 e2e (up, ${process.env.STOWAGE_BENCH_ETCD ? 'etcd' : 'SQLite'}): N=${N} clients=${CLIENTS} all-bound=${secs.toFixed(2)}s creates/s=${Math.round((2 * N) / createdSecs)} (${2 * N} created in ${createdSecs.toFixed(2)}s) server-rss=${currentRssMiB(pid)}MiB peak=${peakRssMiB(pid)}MiB`,
    );
  } finally {
    await s.stop();
  }
}
