/**
 * B6: memory of `stowage up --no-container-runtime` (API server, controllers, node agent, sidecar in
 * one process) at 0 objects and after N PV/PVC pairs are all Bound: the server's RSS and, per
 * thread, the live heap after a full GC (bench/heap-probe.ts).
 *   node dist/bench/memory.js [N...]   (default: 10000)
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HeapReport } from './heap-probe.js';
import { createBoundPairs } from './pairs.js';
import { cpuMs, currentRssMiB, poll, repoRoot, startBenchServer } from './harness.js';

const sizes = process.argv
  .slice(2)
  .map(Number)
  .filter((n) => n > 0);

/** Asks every thread of the server for its heap after a full GC; "main+worker+…" MiB. */
async function heaps(dir: string, request: number): Promise<string> {
  writeFileSync(join(dir, 'request'), String(request));
  const reports = (): HeapReport[] =>
    readdirSync(dir)
      .filter((f) => f.startsWith('heap-'))
      .map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as HeapReport)
      .filter((r) => r.request === request);
  // The main thread and the controllers' worker at least.
  await poll('heap reports', () => reports().length >= 2, 60_000);
  await new Promise((r) => setTimeout(r, 1_000)); // any other worker answers within its 250 ms check
  const rs = reports().sort((a, b) => a.thread - b.thread);
  return `${rs.reduce((s, r) => s + r.usedMiB, 0)}MiB (${rs.map((r) => r.usedMiB).join('+')})`;
}

/** Waits (up to a minute) until the server uses under 10 % of a core over 2 s: the controllers' backlog done. */
async function settled(pid: number): Promise<void> {
  const end = Date.now() + 60_000;
  for (let before = cpuMs(pid); Date.now() < end;) {
    await new Promise((r) => setTimeout(r, 2_000));
    const now = cpuMs(pid);
    if (now - before < 200) return;
    before = now;
  }
}

for (const N of sizes.length ? sizes : [10_000]) {
  const dir = mkdtempSync(join(tmpdir(), 'stowage-heap-'));
  process.env.STOWAGE_HEAP_PROBE_DIR = dir;
  process.env.STOWAGE_BENCH_NODE_ARGS = `--expose-gc --import ${join(repoRoot(), 'dist', 'bench', 'heap-probe.js')}`;
  const s = await startBenchServer([], { controllersProcess: false });
  try {
    const pid = s.child.pid ?? 0;
    await settled(pid);
    const heap0 = await heaps(dir, 1);
    const rss0 = currentRssMiB(pid);
    const { secs } = await createBoundPairs(s, N, 16);
    await settled(pid);
    const heapN = await heaps(dir, 2);
    console.log(
      `B6 memory (up, ${process.env.STOWAGE_BENCH_ETCD ? 'etcd' : 'SQLite'}): at 0: rss=${rss0}MiB heap=${heap0}; ` +
        `at N=${N} pairs bound (${secs.toFixed(1)}s): rss=${currentRssMiB(pid)}MiB heap=${heapN}`,
    );
  } finally {
    await s.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
