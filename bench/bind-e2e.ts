/**
 * B1 end to end, as the issue measures it: against `stowage up --no-container-runtime` (API server,
 * controllers and node agent in one child process), C HTTPS clients create N PersistentVolumes, then N
 * PersistentVolumeClaims (each claim matches exactly one volume size and class); the clock runs from
 * the first PV created until every claim is seen Bound on a watch.
 *   node dist/bench/bind-e2e.js [N...]   (default: 1000 10000; C=16, or B1_CLIENTS; B1_UP_ARGS: more `up` flags)
 */
import { currentRssMiB, peakRssMiB, startBenchServer } from './harness.js';
import { createBoundPairs } from './pairs.js';

const sizes = process.argv
  .slice(2)
  .map(Number)
  .filter((n) => n > 0);
const CLIENTS = Number(process.env.B1_CLIENTS ?? 16);

for (const N of sizes.length ? sizes : [1000, 10_000]) {
  const s = await startBenchServer((process.env.B1_UP_ARGS ?? '').split(' ').filter(Boolean), {
    controllersProcess: false,
  });
  try {
    const { secs, createdSecs } = await createBoundPairs(s, N, CLIENTS);
    const pid = s.child.pid ?? 0;
    console.log(
      `B1 e2e (up, ${process.env.STOWAGE_BENCH_ETCD ? 'etcd' : 'SQLite'}): N=${N} clients=${CLIENTS} all-bound=${secs.toFixed(2)}s creates/s=${Math.round((2 * N) / createdSecs)} (${2 * N} created in ${createdSecs.toFixed(2)}s) server-rss=${currentRssMiB(pid)}MiB peak=${peakRssMiB(pid)}MiB`,
    );
  } finally {
    await s.stop();
  }
}
