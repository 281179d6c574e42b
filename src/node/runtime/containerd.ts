/**
 * The embedded container runtime of `stowage up`: a containerd child process with its own root,
 * state, socket and config under the data dir and the CRI plugin on, as k3s runs one. Pods run
 * on the host network, so no CNI configuration is written.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { ensureDir } from '../../util/fsutil.js';
import { newLogger, type Logger } from '../../util/log.js';
import { CriClient } from './client.js';
import { SHIPPED_SANDBOX_IMAGE } from './pause/image.js';

/** containerd 1.6's own default sandbox image: pulled from the internet. */
export const UPSTREAM_SANDBOX_IMAGE = 'registry.k8s.io/pause:3.6';
/**
 * The default `--pod-infra-container-image`: the sandbox image Stowage ships and imports at start
 * (its pause program is linux/amd64), so no pod needs the internet; elsewhere containerd's default.
 */
export const DEFAULT_SANDBOX_IMAGE = process.arch === 'x64' ? SHIPPED_SANDBOX_IMAGE : UPSTREAM_SANDBOX_IMAGE;

export interface EmbeddedContainerdOptions {
  /** Everything lives under `<dir>`: config.toml, root/, state/, containerd.sock, containerd.log. */
  readonly dir: string;
  readonly sandboxImage?: string;
  /** How long to wait for the CRI socket to answer (default 30 s). */
  readonly readyTimeoutMs?: number;
  readonly log?: Logger;
}

export interface EmbeddedContainerd {
  /** `unix://…/containerd.sock`, for `--container-runtime-endpoint`. */
  readonly endpoint: string;
  readonly pid: number;
  /** SIGTERM, then waits for the process; the containers keep running in their shims until removed. */
  stop(): Promise<void>;
}

/** The programs an embedded runtime needs that are not on PATH (empty: it can start). */
export function missingRuntimePrograms(path: string = process.env.PATH ?? ''): string[] {
  const dirs = [...path.split(delimiter), '/usr/sbin', '/sbin'].filter((d) => d !== '');
  return ['containerd', 'runc'].filter((p) => !dirs.some((d) => existsSync(join(d, p))));
}

/** containerd's config (version 2 schema, as containerd 1.6 and 1.7 read it). */
export function containerdConfig(dir: string, sandboxImage: string): string {
  const q = (s: string): string => JSON.stringify(s);
  return `version = 2
root = ${q(join(dir, 'root'))}
state = ${q(join(dir, 'state'))}

[grpc]
  address = ${q(join(dir, 'containerd.sock'))}

[ttrpc]
  address = ${q(join(dir, 'containerd.sock.ttrpc'))}

[debug]
  address = ""

[metrics]
  address = ""

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = ${q(sandboxImage)}
  # A container asking for a negative OOM score adjustment needs CAP_SYS_RESOURCE, which hosts
  # and sandboxes may withhold; clamp to ours instead of failing to start.
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
  # Registry hosts (mirrors, plain HTTP, CAs): containerd's hosts.toml per registry, <dir>/certs.d/<host>/hosts.toml.
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = ${q(join(dir, 'certs.d'))}
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = ${q(join(dir, 'cni', 'bin'))}
    conf_dir = ${q(join(dir, 'cni', 'conf'))}
`;
}

/**
 * Starts containerd and resolves once its CRI service answers Version. A containerd left running
 * under `dir` by an earlier process (killed without a clean stop) is adopted instead: it owns the
 * pods' containers, which must survive the agent (issue 14, agent restarts).
 */
export async function startEmbeddedContainerd(o: EmbeddedContainerdOptions): Promise<EmbeddedContainerd> {
  const log = o.log ?? newLogger('containerd');
  const missing = missingRuntimePrograms();
  if (missing.length > 0)
    throw new Error(`cannot start the embedded container runtime: ${missing.join(' and ')} not on PATH`);
  ensureDir(o.dir, 0o711);
  const adopted = await adoptRunning(o.dir);
  if (adopted) {
    log.info('adopted the embedded containerd left running', { endpoint: adopted.endpoint, pid: adopted.pid });
    return adopted;
  }
  const config = join(o.dir, 'config.toml');
  writeFileSync(config, containerdConfig(o.dir, o.sandboxImage ?? DEFAULT_SANDBOX_IMAGE), { mode: 0o600 });
  const logFile = createWriteStream(join(o.dir, 'containerd.log'), { flags: 'a' });
  const child: ChildProcess = spawn('containerd', ['--config', config], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.pipe(logFile, { end: false });
  child.stderr?.pipe(logFile, { end: false });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  void exited.then(() => logFile.end());
  const endpoint = `unix://${join(o.dir, 'containerd.sock')}`;
  const cri = new CriClient({ endpoint });
  try {
    const died = exited.then((code) => {
      throw new Error(`containerd exited with code ${code} while starting; see ${join(o.dir, 'containerd.log')}`);
    });
    await Promise.race([waitForCri(cri, o.readyTimeoutMs ?? 30_000), died]);
    void died.catch(() => undefined);
  } catch (e) {
    child.kill('SIGKILL');
    await exited;
    throw e;
  } finally {
    cri.close();
  }
  if (child.pid === undefined) throw new Error('containerd did not start');
  writeFileSync(join(o.dir, PID_FILE), `${child.pid}\n`);
  log.info('embedded containerd ready', { endpoint, pid: child.pid });
  let stopping: Promise<void> | undefined;
  return {
    endpoint,
    pid: child.pid,
    stop: () => {
      stopping ??= (async () => {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
        await exited;
        rmSync(join(o.dir, PID_FILE), { force: true });
      })();
      return stopping;
    },
  };
}

/** The CRI service answers once the plugin has loaded, shortly after the socket exists. */
async function waitForCri(cri: CriClient, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  await cri.connect(timeoutMs);
  for (;;) {
    try {
      await cri.version({ timeoutMs: Math.max(deadline - Date.now(), 1) });
      return;
    } catch (e) {
      if (Date.now() >= deadline) throw e;
      // UNIMPLEMENTED until the CRI plugin has registered its services; the channel is up, so
      // the next attempt is cheap.
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

const PID_FILE = 'containerd.pid';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The containerd named by `<dir>/containerd.pid` when it is alive and answers CRI on our socket. */
async function adoptRunning(dir: string): Promise<EmbeddedContainerd | undefined> {
  let pid: number;
  try {
    pid = Number(readFileSync(join(dir, PID_FILE), 'utf8').trim());
  } catch {
    return undefined;
  }
  if (!Number.isInteger(pid) || pid <= 0 || !alive(pid)) return undefined;
  const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  if (!cmdline.includes(join(dir, 'config.toml'))) return undefined;
  const endpoint = `unix://${join(dir, 'containerd.sock')}`;
  const cri = new CriClient({ endpoint });
  try {
    await cri.connect(2_000);
    await cri.version({ timeoutMs: 2_000 });
  } catch {
    return undefined;
  } finally {
    cri.close();
  }
  let stopping: Promise<void> | undefined;
  return {
    endpoint,
    pid,
    stop: () => {
      stopping ??= (async () => {
        try {
          process.kill(pid, 'SIGTERM');
        } catch {
          return;
        }
        // Not our child: no exit event to wait on, so watch the pid go away.
        while (alive(pid)) await new Promise((r) => setTimeout(r, 50));
        rmSync(join(dir, PID_FILE), { force: true });
      })();
      return stopping;
    },
  };
}
