import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { informerFor } from '../src/client/informer.js';
import type { RestClient } from '../src/client/rest.js';

/** A `stowage up` child process for benchmarks, with an HTTPS client to it. */
export interface BenchServer {
  readonly url: string;
  readonly token: string;
  readonly ca: string;
  readonly dataDir: string;
  readonly child: ChildProcess;
  req(method: string, path: string, body?: unknown, contentType?: string): Promise<{ status: number; text: string }>;
  stop(): Promise<void>;
}

/** The package root (the folder with package.json), from source or from dist/. */
export function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    try {
      readFileSync(join(dir, 'package.json'));
      return dir;
    } catch {
      dir = dirname(dir);
    }
  }
  throw new Error('package root not found');
}

export async function startBenchServer(extraArgs: string[] = process.env.STOWAGE_BENCH_SPLIT ? ['--no-controllers'] : []): Promise<BenchServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'stowage-bench-'));
  const bin = resolve(repoRoot(), 'bin', 'stowage');
  const nodeArgs = (process.env.STOWAGE_BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean); // e.g. --cpu-prof
  // Volume-only pods (the benchmarks measure the storage path; containers would need an image).
  // STOWAGE_BENCH_ETCD=http://127.0.0.1:2379: the store is that etcd (a fresh key prefix per run) instead of SQLite.
  const etcd = process.env.STOWAGE_BENCH_ETCD ? ['--etcd-servers', process.env.STOWAGE_BENCH_ETCD, '--etcd-prefix', `/bench-${basename(dataDir)}`] : [];
  const child = spawn(process.execPath, [...nodeArgs, bin, 'up', '--port', '0', '--data-dir', dataDir, '--no-container-runtime', ...etcd, ...extraArgs], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((res, rej) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /API server (https:\/\/\S+),/.exec(out);
      if (m) res(m[1]!);
    });
    child.once('exit', (code) => rej(new Error(`stowage up exited with ${code}`)));
  });
  const kc = readFileSync(join(dataDir, 'kubeconfig'), 'utf8');
  // STOWAGE_BENCH_SPLIT=1: the controllers run as their own process (two cores instead of one).
  const controllers = extraArgs.includes('--no-controllers')
    ? spawn(process.execPath, [...nodeArgs, bin, 'controllers', '--kubeconfig', join(dataDir, 'kubeconfig')], { stdio: ['ignore', 'ignore', 'inherit'] })
    : undefined;
  const token = /token: (\S+)/.exec(kc)![1]!;
  const ca = Buffer.from(/certificate-authority-data: (\S+)/.exec(kc)![1]!, 'base64').toString();
  const agent = new Agent({ ca, keepAlive: true, maxSockets: 64 });
  return {
    url,
    token,
    ca,
    dataDir,
    child,
    req: (method, path, body, contentType = 'application/json') =>
      new Promise((res, rej) => {
        const payload = body === undefined ? undefined : JSON.stringify(body);
        const r = request(new URL(path, url), { method, agent, headers: { Authorization: `Bearer ${token}`, Accept: 'application/json', ...(payload ? { 'Content-Type': contentType } : {}) } }, (resp) => {
          const chunks: Buffer[] = [];
          resp.on('data', (c: Buffer) => chunks.push(c));
          resp.on('end', () => res({ status: resp.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
        });
        r.on('error', rej);
        if (payload) r.write(payload);
        r.end();
      }),
    stop: async () => {
      agent.destroy();
      controllers?.kill('SIGTERM');
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export function percentile(sorted: readonly number[], p: number): number {
  if (!sorted.length) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Polls `fn` every 20 ms until it is true; throws naming `what` after `timeoutMs`. */
export async function poll(what: string, fn: () => Promise<boolean> | boolean, timeoutMs = 120_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await fn())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** When each pod (by name) was first seen Running, kept up to date by an informer until `signal` aborts. */
export async function podsRunningAt(client: RestClient, opts: { namespace?: string; fieldSelector?: string }, signal: AbortSignal): Promise<Map<string, number>> {
  const running = new Map<string, number>();
  const pods = informerFor(client, 'Pod', opts);
  const seen = (p: Pod): void => {
    const n = p.metadata?.name ?? '';
    if (p.status?.phase === 'Running' && !running.has(n)) running.set(n, performance.now());
  };
  pods.addEventHandler({ onAdd: seen, onUpdate: (_o, p) => seen(p) });
  void pods.run(signal);
  await pods.waitForSync(signal);
  return running;
}

/** Peak resident set size of a child process, from /proc (kB → MiB). */
export function peakRssMiB(pid: number): number {
  try {
    const s = readFileSync(`/proc/${pid}/status`, 'utf8');
    const m = /VmHWM:\s+(\d+) kB/.exec(s);
    return m ? Math.round(Number(m[1]) / 1024) : 0;
  } catch {
    return 0;
  }
}

/**
 * Streams a watch and calls `onEvent` for each decoded event until `stop()`; resolves `done` when
 * the stream ends.
 */
export function streamWatch(s: BenchServer, path: string, onEvent: (ev: { type: string; object: { metadata?: { name?: string; namespace?: string }; status?: { phase?: string } } }) => void): { stop(): void; done: Promise<void> } {
  const agent = new Agent({ ca: s.ca });
  let req: ReturnType<typeof request> | undefined;
  const done = new Promise<void>((resolveDone, rej) => {
    req = request(new URL(path, s.url), { agent, headers: { Authorization: `Bearer ${s.token}`, Accept: 'application/json' } }, (resp) => {
      let buf = '';
      resp.setEncoding('utf8');
      resp.on('data', (c: string) => {
        buf += c;
        let i;
        while ((i = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, i);
          buf = buf.slice(i + 1);
          if (line) onEvent(JSON.parse(line));
        }
      });
      resp.on('end', () => resolveDone());
      resp.on('error', () => resolveDone());
    });
    req.on('error', (e) => ((e as NodeJS.ErrnoException).code === 'ECONNRESET' ? resolveDone() : rej(e)));
    req.end();
  });
  return {
    stop: () => {
      req?.destroy();
      agent.destroy();
    },
    done,
  };
}

/** Runs `n` tasks with `concurrency` workers. */
export async function pool(n: number, concurrency: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (;;) {
        const i = next++;
        if (i >= n) return;
        await task(i);
      }
    }),
  );
}
