/**
 * Container log rotation as the kubelet's container log manager does it: every 10 s each running
 * container's CRI log is checked; one past `containerLogMaxSize` (10Mi) is renamed to
 * `<log>.<YYYYMMDD-hhmmss>` and the runtime asked to reopen it (ReopenContainerLog; on failure
 * the rename is undone). Before that, leftovers go (`.tmp` files, a plain file whose `.gz`
 * exists), the oldest rotated files go so that at most `containerLogMaxFiles` (5) remain with the
 * new one and the live log, and older rotated files are gzipped; the newest rotated file stays
 * plain. `planRotation` decides (pure); `rotateContainerLogs` acts.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { readdir, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import type { Logger } from '../../util/log.js';
import { newLoop } from '../../util/loop.js';
import type { CriClient } from './client.js';

export interface LogRotationPolicy {
  /** The kubelet's containerLogMaxSize, in bytes. */
  readonly maxSizeBytes: number;
  /** The kubelet's containerLogMaxFiles: the live log and its rotated files, at least 2. */
  readonly maxFiles: number;
}

export const DEFAULT_LOG_ROTATION: LogRotationPolicy = { maxSizeBytes: 10 * 1024 * 1024, maxFiles: 5 };
/** The kubelet's log monitoring period. */
export const LOG_MONITOR_PERIOD_MS = 10_000;
const GZ = '.gz';
const TMP = '.tmp';

/** `20060102-150405` in UTC, the suffix of a rotated log. */
export function rotationSuffix(nowMs: number): string {
  const d = new Date(nowMs);
  const p = (n: number): string => String(n).padStart(2, '0');
  return `${d.getUTCFullYear()}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}-${p(d.getUTCHours())}${p(d.getUTCMinutes())}${p(d.getUTCSeconds())}`;
}

export interface RotationPlan {
  readonly remove: readonly string[];
  readonly compress: readonly string[];
  /** The name the live log is renamed to; undefined when it is below the size. */
  readonly rotateTo?: string;
}

/**
 * What to do with one container's log: `siblings` are the names in its directory that start
 * with `<log>.` (rotated, compressed, temporary).
 */
export function planRotation(o: {
  log: string;
  sizeBytes: number;
  siblings: readonly string[];
  nowMs: number;
  policy: LogRotationPolicy;
}): RotationPlan {
  if (o.sizeBytes < o.policy.maxSizeBytes) return { remove: [], compress: [] };
  const prefix = `${o.log}.`;
  const own = o.siblings.filter((n) => n.startsWith(prefix)).sort();
  const remove = own.filter((n) => n.endsWith(TMP) || (!n.endsWith(GZ) && own.includes(n + GZ)));
  let kept = own.filter((n) => !remove.includes(n));
  // Room for the file about to be rotated and the live log.
  const excess = kept.length - Math.max(o.policy.maxFiles - 2, 0);
  if (excess > 0) {
    remove.push(...kept.slice(0, excess));
    kept = kept.slice(excess);
  }
  let rotateTo = `${o.log}.${rotationSuffix(o.nowMs)}`;
  if (kept.some((n) => n === rotateTo || n === rotateTo + GZ)) rotateTo = `${rotateTo}-${o.nowMs % 1000}`;
  return { remove, compress: kept.filter((n) => !n.endsWith(GZ)), rotateTo };
}

async function gzipFile(path: string): Promise<void> {
  const tmp = `${path}${GZ}${TMP}`;
  await pipeline(createReadStream(path), createGzip(), createWriteStream(tmp, { mode: 0o640 }));
  await rename(tmp, path + GZ);
  await rm(path, { force: true });
}

/** Applies the plan to the log at `path` of container `id`. */
async function rotateOne(cri: CriClient, id: string, path: string, plan: RotationPlan): Promise<void> {
  const dir = dirname(path);
  for (const n of plan.remove) await rm(join(dir, n), { force: true });
  for (const n of plan.compress) await gzipFile(join(dir, n));
  if (plan.rotateTo === undefined) return;
  const rotated = join(dir, plan.rotateTo);
  await rename(path, rotated);
  try {
    await cri.reopenContainerLog(id);
  } catch (e) {
    // The runtime still writes to the renamed file: give it its name back.
    await rename(rotated, path).catch(() => undefined);
    throw e;
  }
}

/** One pass over the running containers; a container whose rotation fails is logged, the others go on. */
export async function rotateContainerLogs(o: {
  cri: CriClient;
  policy: LogRotationPolicy;
  nowMs: number;
  log: Logger;
  signal?: AbortSignal;
}): Promise<void> {
  const running = await o.cri.listContainers({ state: { state: 'CONTAINER_RUNNING' } }, { signal: o.signal });
  for (const c of running) {
    try {
      const path = (await o.cri.containerStatus(c.id, { signal: o.signal })).status?.logPath ?? '';
      if (path === '') continue;
      const st = await stat(path).catch(() => undefined);
      if (!st || st.size < o.policy.maxSizeBytes) continue;
      const siblings = await readdir(dirname(path));
      const plan = planRotation({
        log: basename(path),
        sizeBytes: st.size,
        siblings,
        nowMs: o.nowMs,
        policy: o.policy,
      });
      await rotateOne(o.cri, c.id, path, plan);
      o.log.debug('rotated a container log', { container: c.id, path, rotatedTo: plan.rotateTo });
    } catch (e) {
      if (o.signal?.aborted) return;
      o.log.warn('could not rotate a container log', {
        container: c.id,
        error: e instanceof Error ? e.message : String(e),
      });
    }
  }
}

/** Rotates every LOG_MONITOR_PERIOD_MS (or `periodMs`) until `signal` aborts. */
export function runContainerLogRotation(o: {
  cri: CriClient;
  policy: LogRotationPolicy;
  signal: AbortSignal;
  log: Logger;
  periodMs?: number;
}): Promise<void> {
  const loop = newLoop({
    name: 'container-log-rotation',
    periodMs: o.periodMs ?? LOG_MONITOR_PERIOD_MS,
    runAtStart: false,
    log: o.log,
    body: (signal) => rotateContainerLogs({ cri: o.cri, policy: o.policy, nowMs: Date.now(), log: o.log, signal }),
  });
  return loop.run(o.signal);
}
