/**
 * `npm run bench`: runs the benchmark set one after another (each a child process printing one
 * line), then writes their lines as one table to bench/results.md (or BENCH_OUT) and prints it.
 * Root-only benchmarks (podstart, chaos) join when run as root. BENCH_ONLY=b5,b1e picks by id.
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './harness.js';

interface Bench {
  readonly id: string;
  readonly what: string;
  readonly script: string;
  readonly args: readonly string[];
  readonly root?: boolean;
}

const SET: readonly Bench[] = [
  { id: 'b5', what: 'API creates/s, list latency (API server alone)', script: 'api-writes.js', args: ['10000', '16'] },
  { id: 'b1', what: 'PV binding, controllers only', script: 'bind.js', args: ['1000', '10000'] },
  { id: 'b1e', what: 'PV binding end to end through HTTPS', script: 'bind-e2e.js', args: ['1000', '10000'] },
  { id: 'b6', what: 'memory at 0 and 10k bound pairs', script: 'memory.js', args: ['10000'] },
  { id: 'b2', what: 'WaitForFirstConsumer provisioning', script: 'provision.js', args: [], root: true },
  { id: 'b3', what: 'pod start with volumes', script: 'podstart.js', args: [], root: true },
  { id: 'b4', what: 'plugin registration', script: 'register.js', args: [] },
  { id: 'csi', what: 'node-side CSI cycles', script: 'csi.js', args: [], root: true },
];

const only = process.env.BENCH_ONLY?.split(',').filter(Boolean);
const isRoot = process.getuid?.() === 0;
const rows: string[] = [];
for (const b of SET) {
  if (only ? !only.includes(b.id) : b.root && !isRoot) continue;
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [join(repoRoot(), 'dist', 'bench', b.script), ...b.args], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
    timeout: 30 * 60_000,
  });
  const lines = r.stdout
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.length > 0);
  const result =
    r.status === 0 ? lines.join('<br>') : `FAILED (exit ${r.status ?? r.signal ?? '?'}) ${lines.join(' ')}`;
  const row = `| ${b.id} | ${b.what} | ${result.replaceAll('|', '\\|')} | ${((performance.now() - t0) / 1000).toFixed(0)} s |`;
  console.log(row);
  rows.push(row);
}
const table = [
  `Benchmarks of ${new Date().toISOString()} (node ${process.version})`,
  '',
  '| id | measures | result | wall |',
  '|---|---|---|---|',
  ...rows,
  '',
].join('\n');
const out = process.env.BENCH_OUT ?? join(repoRoot(), 'bench', 'results.md');
writeFileSync(out, table);
console.log(`\n${table}\nwritten to ${out}`);
