/**
 * Preloaded into a benchmarked `stowage up` (`--expose-gc --import dist/bench/heap-probe.js`, with
 * STOWAGE_HEAP_PROBE_DIR set): in the main thread and in every worker thread, when the benchmark
 * writes a request number to `<dir>/request`, runs a full GC and writes this isolate's heap figures
 * to `<dir>/heap-<thread>.json`. Nothing runs between requests but a 250 ms file check.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { getHeapStatistics } from 'node:v8';
import { threadId } from 'node:worker_threads';

/** What each isolate reports (MiB after a full GC). */
export interface HeapReport {
  readonly request: number;
  readonly thread: number;
  readonly usedMiB: number;
  readonly totalMiB: number;
}

const dir = process.env.STOWAGE_HEAP_PROBE_DIR;
const gc = (globalThis as { gc?: () => void }).gc;
if (dir) {
  let handled = 0;
  setInterval(() => {
    let request = 0;
    try {
      request = Number(readFileSync(join(dir, 'request'), 'utf8'));
    } catch {
      return;
    }
    if (!(request > handled)) return;
    handled = request;
    gc?.();
    const h = getHeapStatistics();
    const report: HeapReport = {
      request,
      thread: threadId,
      usedMiB: Math.round(h.used_heap_size / 1048576),
      totalMiB: Math.round(h.total_heap_size / 1048576),
    };
    writeFileSync(join(dir, `heap-${threadId}.json`), JSON.stringify(report));
  }, 250).unref();
}
