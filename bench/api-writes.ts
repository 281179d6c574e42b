/**
 * B5: API write throughput and list latency. Creates N PersistentVolumes through the HTTPS API
 * with C concurrent clients against a `stowage up --no-controllers --no-node` child process (the
 * API server alone: with controllers, every new PV also gets its Available status write), then
 * times lists of them.
 *   node dist/bench/api-writes.js [N=10000] [C=16] [S=1]
 * STOWAGE_BENCH_ETCD=<url>: on that etcd; S > 1 (etcd only): S API servers on it, the clients
 * spread over them (client i talks to server i mod S), the list read through the last one.
 * STOWAGE_BENCH_KIND=pv|configmap|cr (default pv): what is created; `cr` a small custom resource
 * of a CRD the benchmark installs first (schema validation, defaulting and pruning on each create).
 */
import { cpuMs, percentile, peakRssMiB, startBenchServer } from './harness.js';

const N = Number(process.argv[2] ?? 10_000);
const C = Number(process.argv[3] ?? 16);
const S = Number(process.argv[4] ?? 1);

const KIND = process.env.STOWAGE_BENCH_KIND ?? 'pv';

/** Where each kind is created and listed, and the body of object `i`. */
const TARGETS: Record<string, { path: string; body: (i: number) => unknown }> = {
  pv: {
    path: '/api/v1/persistentvolumes',
    body: (i) => ({
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: `bench-pv-${i}` },
      spec: {
        capacity: { storage: `${1 + (i % 100)}Gi` },
        accessModes: ['ReadWriteOnce'],
        storageClassName: 'bench',
        hostPath: { path: `/tmp/bench/${i}` },
      },
    }),
  },
  configmap: {
    path: '/api/v1/namespaces/default/configmaps',
    body: (i) => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: `bench-cm-${i}` },
      data: { size: String(i % 100) },
    }),
  },
  cr: {
    path: '/apis/bench.stowage.io/v1/namespaces/default/items',
    body: (i) => ({
      apiVersion: 'bench.stowage.io/v1',
      kind: 'Item',
      metadata: { name: `bench-cr-${i}` },
      spec: { size: i % 100, class: 'bench' },
    }),
  },
};
const target = TARGETS[KIND];
if (!target) throw new Error(`STOWAGE_BENCH_KIND: unknown kind ${KIND} (pv, configmap, cr)`);

const BENCH_CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'items.bench.stowage.io' },
  spec: {
    group: 'bench.stowage.io',
    scope: 'Namespaced',
    names: { plural: 'items', kind: 'Item' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                required: ['size'],
                properties: {
                  size: { type: 'integer', minimum: 0 },
                  class: { type: 'string', maxLength: 63 },
                  mode: { type: 'string', enum: ['fast', 'slow'], default: 'fast' },
                },
              },
              status: { type: 'object', properties: { ready: { type: 'boolean' } } },
            },
          },
        },
      },
    ],
  },
};

const s = await startBenchServer(['--no-controllers', '--no-node'], {
  controllersProcess: false,
  extraApiServers: S - 1,
});
try {
  if (KIND === 'cr') {
    const r = await s.reqAt(0, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', BENCH_CRD);
    if (r.status !== 201) throw new Error(`CRD: ${r.status} ${r.text}`);
    // Every server serves it once established (each has its own registrar).
    for (let k = 0; k < S; k++) {
      while ((await s.reqAt(k, 'GET', target.path)).status !== 200) await new Promise((res) => setTimeout(res, 20));
    }
  }
  const lat: number[] = [];
  let next = 0;
  const serverCpu = (): number => s.serverPids.reduce((sum, pid) => sum + cpuMs(pid), 0);
  const cpu0 = serverCpu();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: C }, async (_, client) => {
      for (;;) {
        const i = next++;
        if (i >= N) return;
        const body = target.body(i);
        const a = performance.now();
        const r = await s.reqAt(client % S, 'POST', target.path, body);
        lat.push(performance.now() - a);
        if (r.status !== 201) throw new Error(`create ${i}: ${r.status} ${r.text}`);
      }
    }),
  );
  const secs = (performance.now() - t0) / 1000;
  // CPU the API server(s) spent per create: less sensitive to a busy machine than creates/s.
  const cpuPerCreate = (serverCpu() - cpu0) / N;
  lat.sort((a, b) => a - b);
  const lists: number[] = [];
  for (let i = 0; i < 5; i++) {
    const a = performance.now();
    const r = await s.reqAt(S - 1, 'GET', target.path);
    lists.push(performance.now() - a);
    if (r.status !== 200 || (JSON.parse(r.text) as { items: unknown[] }).items.length !== N)
      throw new Error('list incomplete');
  }
  lists.sort((a, b) => a - b);
  console.log(
    `B5 api-writes ${KIND} (API server alone${S > 1 ? ` ×${S}` : ''}, ${process.env.STOWAGE_BENCH_ETCD ? 'etcd' : 'SQLite'}): N=${N} clients=${C} creates/s=${Math.round(N / secs)} p50=${percentile(lat, 50).toFixed(1)}ms p99=${percentile(lat, 99).toFixed(1)}ms server-cpu/create=${cpuPerCreate.toFixed(2)}ms ` +
      `list(${N}) p50=${percentile(lists, 50).toFixed(0)}ms min=${lists[0]!.toFixed(0)}ms server-peak-rss=${peakRssMiB(s.child.pid!)}MiB`,
  );
} finally {
  await s.stop();
}
