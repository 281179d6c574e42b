/**
 * "Node hosts" for multi-node tests: each host is a network namespace the kit makes itself, with a
 * veth pair onto a private bridge in the root namespace and an address only on that bridge (no
 * route anywhere else), and its own mount namespace, running `stowage node`, the built-in hostpath
 * driver under its own name, its registrar, and optionally a CSI sidecar — all talking to an API
 * server (`stowage up --address <bridge ip>`, with `stowage controllers` beside it) over that
 * network only. A host can be stopped (SIGTERM), killed (every process SIGKILLed: its mounts go
 * with its mount namespace, like a power cut), cut off (link down) and brought back.
 *
 * A volume mounted on a host is seen only inside it: read it with `host.sh(…)`. `close()` tears
 * everything down and `leftovers()` names whatever of this kit's is still there (namespaces, links,
 * mounts, loop devices, processes), for the test to fail on.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { RestClient, loadKubeconfig } from '../../src/client/index.js';
import { repoRoot } from '../harness.js';

const BIN = join(repoRoot(), 'bin', 'stowage');

const run = promisify(execFile);

/** The driver name of the shared storage (`NetnsClusterOptions.sharedStorage`). */
export const SHARED_DRIVER = 'shared.hostpath.csi.stowage.io';

export interface NetnsClusterOptions {
  /** Extra flags of `stowage controllers` (e.g. a short --node-monitor-grace-period). */
  readonly controllerFlags?: readonly string[];
  /**
   * Shared storage beside the API server (a stand-in for a storage array): a hostpath driver with
   * `--shared-storage --enable-attach` and its sidecar, named SHARED_DRIVER; hosts with
   * `shared: true` mount its volumes, so a volume can move between hosts with its data.
   */
  readonly sharedStorage?: boolean;
}

export interface HostOptions {
  /** `--enable-attach` on the host's driver. */
  readonly attach?: boolean;
  /** Run a CSI sidecar (provisioner, attacher) for the host's own driver inside the host. */
  readonly sidecar?: boolean;
  /** Extra flags of `stowage node`. */
  readonly nodeFlags?: readonly string[];
  /** The host's driver is the node side of the cluster's shared storage (SHARED_DRIVER) instead of a local one. */
  readonly shared?: boolean;
}

export type HostProcess = 'node' | 'driver' | 'registrar' | 'sidecar';

export interface NodeHost {
  readonly name: string;
  /** The host's address on the bridge. */
  readonly address: string;
  readonly netns: string;
  readonly rootDir: string;
  /** The host's own hostpath driver name (volumes are local to the host). */
  readonly driverName: string;
  /** Starts the host (a fresh mount namespace after a kill, as after a reboot) and its processes. */
  start(): Promise<void>;
  /** SIGTERM to each process; waits for them. */
  stop(): Promise<void>;
  /** SIGKILL to every process of the host, at once. */
  kill(): Promise<void>;
  /** Restarts one process (after SIGTERM, or a SIGKILL as in a crash), leaving the others and the mounts in place. */
  restart(p: HostProcess, how?: 'stop' | 'kill'): Promise<void>;
  /** Link down / up on the bridge side. */
  cutOff(): Promise<void>;
  reconnect(): Promise<void>;
  /** Runs `sh -c script` inside the host (its network and mount namespaces). */
  sh(script: string): Promise<string>;
  /** Mount points under the host's root dir, as the host sees them. */
  mounts(): Promise<string[]>;
}

export interface NetnsCluster {
  readonly client: RestClient;
  readonly kubeconfig: string;
  readonly apiAddress: string;
  readonly dir: string;
  addHost(name: string, o?: HostOptions): Promise<NodeHost>;
  /** What of this cluster is still there (empty after a clean `close`). */
  leftovers(): Promise<string[]>;
  close(): Promise<void>;
}

/** Why multi-node tests cannot run here (undefined when they can). */
export async function netnsUnavailable(): Promise<string | undefined> {
  if (process.getuid?.() !== 0) return 'network namespaces need root';
  const probe = `stw-probe-${process.pid}`;
  try {
    await run('ip', ['netns', 'add', probe]);
  } catch (e) {
    return `cannot create a network namespace (ip netns add: ${(e as Error).message.split('\n')[0]})`;
  }
  await run('ip', ['netns', 'del', probe]).catch(() => undefined);
  for (const p of ['nsenter', 'losetup', 'findmnt']) {
    try {
      await run('which', [p]);
    } catch {
      return `${p} is not installed`;
    }
  }
  return undefined;
}

/**
 * The kubeconfig of a host's node agent: the node's own identity (`system:node:<host>`), printed
 * by `stowage kubeconfig node` with the admin's, as a user joining a host would get it. The
 * host's sidecar, when it runs one, keeps the admin's (a sidecar is not a node).
 */
async function nodeKubeconfig(c: { kubeconfig: string; dir: string }, host: string): Promise<string> {
  const path = join(c.dir, `${host}.kubeconfig`);
  const { stdout } = await run(process.execPath, [BIN, 'kubeconfig', 'node', host, '--kubeconfig', c.kubeconfig]);
  writeFileSync(path, stdout, { mode: 0o600 });
  return path;
}

/** A 10.x.y.0/24 no interface or route of this machine uses. */
async function freeSubnet(): Promise<string> {
  const used = (await run('ip', ['-o', '-4', 'addr'])).stdout + (await run('ip', ['-4', 'route'])).stdout;
  for (;;) {
    const prefix = `10.${200 + Math.floor(Math.random() * 50)}.${Math.floor(Math.random() * 250)}`;
    if (!used.includes(`${prefix}.`)) return prefix;
  }
}

interface Proc {
  readonly child: ChildProcess;
  readonly exited: Promise<void>;
}

function spawnLogged(cmd: string, args: readonly string[], logFile: string, stdout: 'pipe' | 'log' = 'log'): Proc {
  const log = openSync(logFile, 'a');
  const child = spawn(cmd, args, { stdio: ['ignore', stdout === 'pipe' ? 'pipe' : log, log] });
  closeSync(log);
  return { child, exited: new Promise((r) => child.once('exit', () => r())) };
}

async function waitExit(p: Proc, ms: number): Promise<void> {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return;
  const timer = setTimeout(() => p.child.kill('SIGKILL'), ms);
  await p.exited;
  clearTimeout(timer);
}

export async function startNetnsCluster(o: NetnsClusterOptions = {}): Promise<NetnsCluster> {
  const id = `${(process.pid % 1296).toString(36)}${Math.floor(Math.random() * 1296).toString(36)}`
    .padEnd(4, '0')
    .slice(0, 4);
  const dir = mkdtempSync(join(tmpdir(), `stowage-netns-${id}-`));
  const logs = join(dir, 'logs');
  mkdirSync(logs);
  const prefix = await freeSubnet();
  const bridge = `stwb${id}`;
  const apiAddress = `${prefix}.1`;
  const hosts: HostImpl[] = [];
  const ip = (...args: string[]): Promise<unknown> => run('ip', args);

  await ip('link', 'add', bridge, 'type', 'bridge');
  await ip('addr', 'add', `${apiAddress}/24`, 'dev', bridge);
  await ip('link', 'set', bridge, 'up');

  const dataDir = join(dir, 'api');
  const api = spawnLogged(
    process.execPath,
    [
      BIN,
      'up',
      '--address',
      apiAddress,
      '--port',
      '0',
      '--data-dir',
      dataDir,
      '--no-node',
      '--no-hostpath',
      '--no-controllers',
      '--no-default-class',
    ],
    join(logs, 'api.log'),
    'pipe',
  );
  await new Promise<void>((res, rej) => {
    let out = '';
    api.child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('Stowage is running')) res();
    });
    void api.exited.then(() => rej(new Error(`stowage up exited (see ${join(logs, 'api.log')})`)));
  });
  api.child.stdout!.resume();
  const kubeconfig = join(dataDir, 'kubeconfig');
  const controllers = spawnLogged(
    process.execPath,
    [BIN, 'controllers', '--kubeconfig', kubeconfig, ...(o.controllerFlags ?? [])],
    join(logs, 'controllers.log'),
  );
  const client = new RestClient({ ...(await loadKubeconfig(kubeconfig)), timeoutMs: 10_000 });
  const cluster = { kubeconfig, dir };
  const sharedStateDir = join(dir, 'storage', 'state');
  const storage: Proc[] = [];
  if (o.sharedStorage) {
    const socket = join(dir, 'storage', 'csi.sock');
    mkdirSync(sharedStateDir, { recursive: true });
    const driverArgs = [
      'csi-hostpath',
      '--endpoint',
      `unix://${socket}`,
      '--node-id',
      'storage',
      '--state-dir',
      sharedStateDir,
      '--driver-name',
      SHARED_DRIVER,
      '--enable-attach',
      '--shared-storage',
    ];
    storage.push(spawnLogged(process.execPath, [BIN, ...driverArgs], join(logs, 'storage-driver.log')));
    // The sidecar gives up when its driver does not answer at start (as external-provisioner does).
    for (let n = 0; n < 1000 && !existsSync(socket); n++) await new Promise((r) => setTimeout(r, 20));
    storage.push(
      spawnLogged(
        process.execPath,
        [BIN, 'csi-sidecar', '--csi-address', `unix://${socket}`, '--kubeconfig', kubeconfig, '--timeout', '5s'],
        join(logs, 'storage-sidecar.log'),
      ),
    );
  }

  const addHost = async (name: string, ho: HostOptions = {}): Promise<NodeHost> => {
    const i = hosts.length + 1;
    const h = new HostImpl({
      name,
      i,
      id,
      prefix,
      bridge,
      dir,
      logs,
      kubeconfig,
      nodeKubeconfig: await nodeKubeconfig(cluster, name),
      sharedStateDir,
      o: ho,
    });
    hosts.push(h);
    await h.create();
    await h.start();
    return h;
  };

  const leftovers = async (): Promise<string[]> => {
    const out: string[] = [];
    const netns = (await run('ip', ['netns', 'list'])).stdout.split('\n').filter((l) => l.startsWith(`stw-${id}-`));
    out.push(...netns.map((n) => `netns ${n}`));
    const links = (await run('ip', ['-o', 'link'])).stdout
      .split('\n')
      .filter((l) => new RegExp(`stw[bv]${id}`).test(l));
    out.push(...links.map((l) => `link ${l.split(':')[1]?.trim()}`));
    const mounts = readFileSync('/proc/self/mountinfo', 'utf8')
      .split('\n')
      .filter((l) => l.split(' ')[4]?.startsWith(dir));
    out.push(...mounts.map((m) => `mount ${m.split(' ')[4]}`));
    const loops = (await run('losetup', ['-l', '-n', '-O', 'NAME,BACK-FILE'])).stdout
      .split('\n')
      .filter((l) => l.includes(dir));
    out.push(...loops.map((l) => `loop ${l.trim()}`));
    for (const p of [api, controllers, ...storage, ...hosts.flatMap((h) => h.procs())])
      if (p.child.exitCode === null && p.child.signalCode === null)
        out.push(`process ${p.child.pid} ${p.child.spawnargs.slice(0, 4).join(' ')}`);
    return out;
  };

  const close = async (): Promise<void> => {
    for (const h of hosts) await h.destroy();
    for (const p of storage) p.child.kill('SIGTERM');
    await Promise.all(storage.map((p) => waitExit(p, 10_000)));
    controllers.child.kill('SIGTERM');
    await waitExit(controllers, 10_000);
    api.child.kill('SIGTERM');
    await waitExit(api, 10_000);
    client.close();
    await ip('link', 'del', bridge).catch(() => undefined);
    // Loop devices a killed host left behind (the kernel keeps them past its mount namespace).
    const loops = (await run('losetup', ['-l', '-n', '-O', 'NAME,BACK-FILE'])).stdout
      .split('\n')
      .filter((l) => l.includes(dir));
    for (const l of loops) await run('losetup', ['-d', l.trim().split(/\s+/)[0]!]).catch(() => undefined);
    // STOWAGE_KEEP_NETNS_LOGS=1 keeps the processes' logs for a look after a failure.
    if ((await leftovers()).length === 0 && !process.env.STOWAGE_KEEP_NETNS_LOGS)
      rmSync(dir, { recursive: true, force: true });
  };

  return { client, kubeconfig, apiAddress, dir, addHost, leftovers, close };
}

class HostImpl implements NodeHost {
  readonly name: string;
  readonly address: string;
  readonly netns: string;
  readonly rootDir: string;
  readonly driverName: string;
  private readonly veth: string;
  private readonly stateDir: string;
  private init?: Proc;
  private readonly running = new Map<HostProcess, Proc>();
  private readonly all: Proc[] = [];

  constructor(
    private readonly c: {
      name: string;
      i: number;
      id: string;
      prefix: string;
      bridge: string;
      dir: string;
      logs: string;
      kubeconfig: string;
      nodeKubeconfig: string;
      sharedStateDir: string;
      o: HostOptions;
    },
  ) {
    this.name = c.name;
    this.address = `${c.prefix}.${10 + c.i}`;
    this.netns = `stw-${c.id}-${c.name}`;
    this.veth = `stwv${c.id}${c.i}`;
    this.rootDir = join(c.dir, 'hosts', c.name, 'node');
    this.stateDir = join(c.dir, 'hosts', c.name, 'csi-hostpath');
    this.driverName = c.o.shared ? SHARED_DRIVER : `${c.name}.hostpath.csi.stowage.io`;
    mkdirSync(join(this.rootDir, 'plugins', this.driverName), { recursive: true });
  }

  procs(): Proc[] {
    return [...this.all, ...(this.init ? [this.init] : [])];
  }

  async create(): Promise<void> {
    const ip = (...a: string[]): Promise<unknown> => run('ip', a);
    await ip('netns', 'add', this.netns);
    await ip('link', 'add', this.veth, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', this.netns);
    await ip('link', 'set', this.veth, 'master', this.c.bridge);
    await ip('link', 'set', this.veth, 'up');
    await ip('-n', this.netns, 'addr', 'add', `${this.address}/24`, 'dev', 'eth0');
    await ip('-n', this.netns, 'link', 'set', 'eth0', 'up');
    await ip('-n', this.netns, 'link', 'set', 'lo', 'up');
  }

  private args(p: HostProcess): string[] {
    const socket = join(this.rootDir, 'plugins', this.driverName, 'csi.sock');
    const attach = this.c.o.attach || this.c.o.shared ? ['--enable-attach'] : [];
    const shared = this.c.o.shared ? ['--volumes-from', this.c.sharedStateDir] : [];
    switch (p) {
      case 'driver':
        return [
          'csi-hostpath',
          '--endpoint',
          `unix://${socket}`,
          '--node-id',
          this.name,
          '--state-dir',
          this.stateDir,
          '--driver-name',
          this.driverName,
          ...attach,
          ...shared,
        ];
      case 'registrar':
        return [
          'csi-registrar',
          '--csi-address',
          socket,
          '--kubelet-registration-path',
          socket,
          '--plugin-registration-path',
          join(this.rootDir, 'plugins_registry'),
        ];
      case 'sidecar':
        return [
          'csi-sidecar',
          '--csi-address',
          `unix://${socket}`,
          '--kubeconfig',
          this.c.kubeconfig,
          '--timeout',
          '5s',
        ];
      case 'node':
        return [
          'node',
          '--kubeconfig',
          this.c.nodeKubeconfig,
          '--node-name',
          this.name,
          '--root-dir',
          this.rootDir,
          '--backoff-cap',
          '1s',
          ...(this.c.o.nodeFlags ?? []),
        ];
    }
  }

  private spawnIn(p: HostProcess): void {
    const pid = String(this.init!.child.pid);
    const proc = spawnLogged(
      'nsenter',
      ['-t', pid, '-n', '-m', '--', process.execPath, BIN, ...this.args(p)],
      join(this.c.logs, `${this.name}-${p}.log`),
    );
    this.running.set(p, proc);
    this.all.push(proc);
  }

  async start(): Promise<void> {
    if (!this.init || this.init.child.exitCode !== null || this.init.child.signalCode !== null) {
      // The host's "init": holds its mount namespace (ip netns exec makes a new one, a slave of ours).
      this.init = spawnLogged(
        'ip',
        ['netns', 'exec', this.netns, 'sleep', 'infinity'],
        join(this.c.logs, `${this.name}-init.log`),
      );
      await this.untilInNetns(this.init.child.pid!);
    }
    const procs: HostProcess[] = ['driver', 'registrar', ...(this.c.o.sidecar ? (['sidecar'] as const) : []), 'node'];
    for (const p of procs) this.spawnIn(p);
  }

  /** `ip netns exec` execs sleep once it has entered the namespaces; wait for that. */
  private async untilInNetns(pid: number): Promise<void> {
    const want = (await run('ip', ['netns', 'exec', this.netns, 'readlink', '/proc/self/ns/net'])).stdout.trim();
    for (let n = 0; n < 500; n++) {
      try {
        const [net, comm] = await Promise.all([
          run('readlink', [`/proc/${pid}/ns/net`]),
          Promise.resolve(readFileSync(`/proc/${pid}/comm`, 'utf8').trim()),
        ]);
        if (net.stdout.trim() === want && comm === 'sleep') return;
      } catch {
        // not there yet
      }
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error(`host ${this.name}: init never entered ${this.netns}`);
  }

  async stop(): Promise<void> {
    const procs = [...this.running.values()];
    for (const p of procs) p.child.kill('SIGTERM');
    await Promise.all(procs.map((p) => waitExit(p, 10_000)));
    this.running.clear();
  }

  async kill(): Promise<void> {
    // Every process in the host's network namespace, whatever started it.
    const pids = (await run('ip', ['netns', 'pids', this.netns])).stdout
      .split('\n')
      .filter((l) => /^\d+$/.test(l.trim()));
    for (const pid of pids) {
      try {
        process.kill(Number(pid), 'SIGKILL');
      } catch {
        // gone already
      }
    }
    await Promise.all(this.procs().map((p) => p.exited));
    this.running.clear();
    this.init = undefined;
  }

  async restart(p: HostProcess, how: 'stop' | 'kill' = 'stop'): Promise<void> {
    const proc = this.running.get(p);
    if (proc) {
      proc.child.kill(how === 'kill' ? 'SIGKILL' : 'SIGTERM');
      await waitExit(proc, 10_000);
    }
    this.spawnIn(p);
  }

  async cutOff(): Promise<void> {
    await run('ip', ['link', 'set', this.veth, 'down']);
  }

  async reconnect(): Promise<void> {
    await run('ip', ['link', 'set', this.veth, 'up']);
  }

  async sh(script: string): Promise<string> {
    if (!this.init) throw new Error(`host ${this.name} is not running`);
    return (await run('nsenter', ['-t', String(this.init.child.pid), '-n', '-m', '--', 'sh', '-c', script])).stdout;
  }

  async mounts(): Promise<string[]> {
    const out = await this.sh('cat /proc/self/mountinfo');
    return out
      .split('\n')
      .map((l) => l.split(' ')[4] ?? '')
      .filter((m) => m.startsWith(this.rootDir));
  }

  async destroy(): Promise<void> {
    await this.stop().catch(() => undefined);
    if (this.init) await this.kill();
    await run('ip', ['netns', 'del', this.netns]).catch(() => undefined);
    await run('ip', ['link', 'del', this.veth]).catch(() => undefined);
  }
}
