import { pool, streamWatch, type BenchServer } from './harness.js';

const CLASSES = ['', 'gold', 'silver', 'bronze'];

/**
 * B1's workload: `clients` HTTPS clients create N PersistentVolumes, then N claims (each matching
 * exactly one volume size and class); resolves once a watch has seen every claim Bound, with the
 * seconds from the first create until then and until the last create.
 */
export async function createBoundPairs(
  s: BenchServer,
  n: number,
  clients: number,
): Promise<{ secs: number; createdSecs: number }> {
  let bound = 0;
  let resolveAll: () => void = () => undefined;
  const all = new Promise<void>((r) => (resolveAll = r));
  const seen = new Set<string>();
  const w = streamWatch(s, '/api/v1/namespaces/default/persistentvolumeclaims?watch=true', (ev) => {
    const name = ev.object.metadata?.name ?? '';
    if (ev.object.status?.phase === 'Bound' && !seen.has(name)) {
      seen.add(name);
      if (++bound === n) resolveAll();
    }
  });
  try {
    const t0 = performance.now();
    await pool(n, clients, async (i) => {
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
    await pool(n, clients, async (i) => {
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
    return { secs: (performance.now() - t0) / 1000, createdSecs };
  } finally {
    w.stop();
  }
}
