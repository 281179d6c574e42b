import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
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
  /** `url`, then the URL of each extra `stowage server` (same etcd, same CA and admin token). */
  readonly urls: readonly string[];
  readonly token: string;
  readonly ca: string;
  readonly dataDir: string;
  readonly child: ChildProcess;
  /** Process ids of the API servers (`child` first). */
  readonly serverPids: readonly number[];
  req(method: string, path: string, body?: unknown, contentType?: string): Promise<{ status: number; text: string }>;
  /** The same request to `urls[server]`. */
  reqAt(
    server: number,
    method: string,
    path: string,
    body?: unknown,
    contentType?: string,
  ): Promise<{ status: number; text: string }>;
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

export interface BenchServerOptions {
  /**
   * Run the controllers as their own `stowage controllers` process instead of inside `up` (two
   * cores instead of one). Default: when STOWAGE_BENCH_SPLIT is set. False: no controllers at all
   * when `extraArgs` has --no-controllers.
   */
  readonly controllersProcess?: boolean;
  /** Extra API servers (`stowage server`) on the same etcd; needs STOWAGE_BENCH_ETCD. */
  readonly extraApiServers?: number;
  /** Run pods' containers on `up`'s embedded containerd (default: volume-only pods). */
  readonly runtime?: boolean;
}

function waitForUrl(child: ChildProcess, pattern: RegExp, what: string): Promise<string> {
  return new Promise<string>((res, rej) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = pattern.exec(out);
      if (m) res(m[1]!);
    });
    child.once('exit', (code) => rej(new Error(`${what} exited with ${code}`)));
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

export async function startBenchServer(extraArgs: string[] = [], o: BenchServerOptions = {}): Promise<BenchServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'stowage-bench-'));
  const bin = resolve(repoRoot(), 'bin', 'stowage');
  const nodeArgs = (process.env.STOWAGE_BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean); // e.g. --cpu-prof
  // STOWAGE_BENCH_SPLIT=1: the controllers run as their own process (two cores instead of one).
  const controllersProcess = o.controllersProcess ?? process.env.STOWAGE_BENCH_SPLIT !== undefined;
  const upArgs =
    controllersProcess && !extraArgs.includes('--no-controllers') ? [...extraArgs, '--no-controllers'] : extraArgs;
  // Volume-only pods unless asked (the benchmarks measure the storage path; containers need an image).
  // STOWAGE_BENCH_ETCD=http://127.0.0.1:2379: the store is that etcd (a fresh key prefix per run) instead of SQLite.
  const etcdUrl = process.env.STOWAGE_BENCH_ETCD;
  const etcd = etcdUrl ? ['--etcd-servers', etcdUrl, '--etcd-prefix', `/bench-${basename(dataDir)}`] : [];
  if ((o.extraApiServers ?? 0) > 0 && !etcdUrl) throw new Error('extra API servers need STOWAGE_BENCH_ETCD');
  const child = spawn(
    process.execPath,
    [
      ...nodeArgs,
      bin,
      'up',
      '--port',
      '0',
      '--data-dir',
      dataDir,
      ...(o.runtime ? [] : ['--no-container-runtime']),
      ...etcd,
      ...upArgs,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const url = await waitForUrl(child, /API server (https:\/\/\S+),/, 'stowage up');
  // Each extra server gets a copy of the first one's CA and admin token, so one client talks to all.
  const servers: ChildProcess[] = [];
  const urls = [url];
  for (let i = 0; i < (o.extraApiServers ?? 0); i++) {
    const certDir = join(dataDir, `server-${i + 1}`);
    cpSync(join(dataDir, 'pki'), join(certDir, 'pki'), { recursive: true });
    const server = spawn(
      process.execPath,
      [...nodeArgs, bin, 'server', '--bind-address', '127.0.0.1', '--secure-port', '0', '--cert-dir', certDir, ...etcd],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    servers.push(server);
    urls.push(await waitForUrl(server, /API server (https:\/\/\S+) /, 'stowage server'));
  }
  const kc = readFileSync(join(dataDir, 'kubeconfig'), 'utf8');
  const controllers = controllersProcess
    ? spawn(process.execPath, [...nodeArgs, bin, 'controllers', '--kubeconfig', join(dataDir, 'kubeconfig')], {
        stdio: ['ignore', 'ignore', 'inherit'],
      })
    : undefined;
  const token = /token: (\S+)/.exec(kc)![1]!;
  const ca = Buffer.from(/certificate-authority-data: (\S+)/.exec(kc)![1]!, 'base64').toString();
  const agent = new Agent({ ca, keepAlive: true, maxSockets: 64 });
  const reqAt: BenchServer['reqAt'] = (server, method, path, body, contentType = 'application/json') =>
    new Promise((res, rej) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const r = request(
        new URL(path, urls[server]),
        {
          method,
          agent,
          headers: {
            Authorization: `Bearer ${token}`,
            Accept: 'application/json',
            ...(payload ? { 'Content-Type': contentType } : {}),
          },
        },
        (resp) => {
          const chunks: Buffer[] = [];
          resp.on('data', (c: Buffer) => chunks.push(c));
          resp.on('end', () => res({ status: resp.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
        },
      );
      r.on('error', rej);
      if (payload) r.write(payload);
      r.end();
    });
  return {
    url,
    urls,
    token,
    ca,
    dataDir,
    child,
    serverPids: [child, ...servers].map((c) => c.pid!),
    req: (method, path, body, contentType) => reqAt(0, method, path, body, contentType),
    reqAt,
    stop: async () => {
      agent.destroy();
      controllers?.kill('SIGTERM');
      await Promise.all(servers.map(stopChild));
      await stopChild(child);
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
export async function podsRunningAt(
  client: RestClient,
  opts: { namespace?: string; fieldSelector?: string },
  signal: AbortSignal,
): Promise<Map<string, number>> {
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

/** Current resident set size of a child process, from /proc (kB → MiB). */
export function currentRssMiB(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : 0;
  } catch {
    return 0;
  }
}

/** CPU time (user + system) a process has used so far, in ms, from /proc (clock ticks of 10 ms). */
export function cpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10; // utime, stime (fields 14 and 15 of stat)
  } catch {
    return 0;
  }
}

/**
 * Streams a watch and calls `onEvent` for each decoded event until `stop()`; resolves `done` when
 * the stream ends.
 */
export function streamWatch(
  s: BenchServer,
  path: string,
  onEvent: (ev: {
    type: string;
    object: {
      metadata?: { name?: string; namespace?: string };
      status?: { phase?: string; containerStatuses?: ReadonlyArray<{ ready?: boolean }> };
    };
  }) => void,
): { stop(): void; done: Promise<void> } {
  const agent = new Agent({ ca: s.ca });
  let req: ReturnType<typeof request> | undefined;
  const done = new Promise<void>((resolveDone, rej) => {
    req = request(
      new URL(path, s.url),
      { agent, headers: { Authorization: `Bearer ${s.token}`, Accept: 'application/json' } },
      (resp) => {
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
      },
    );
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
