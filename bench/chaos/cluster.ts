/**
 * A Stowage "cluster" of child processes for chaos runs, on one data dir: either the all-in-one
 * `stowage up`, or the split processes (API server, controllers, CSI sidecar, node agent, hostpath
 * driver, registrar), optionally with the fault proxy between Stowage and the driver. Any process
 * can be SIGKILLed and restarted with the same arguments; the layout on disk stays that of `up`
 * (`csi-hostpath/` for the driver's state, `node/` for the node agent's root).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter, once } from 'node:events';
import { mkdirSync, openSync, closeSync, readFileSync } from 'node:fs';
import { freeLoopbackPort } from '../../src/util/freeport.js';
import { join } from 'node:path';
import { RestClient, loadKubeconfig } from '../../src/client/index.js';
import { repoRoot } from '../harness.js';
import { startFaultProxy, type FaultDecider, type FaultProxy } from './fault-proxy.js';

export const DRIVER = 'hostpath.csi.stowage.io';
export const NODE_NAME = 'chaos';

export const SPLIT_PROCESSES = ['api', 'controllers', 'sidecar', 'node', 'driver', 'registrar'] as const;
export type ProcessName = 'up' | (typeof SPLIT_PROCESSES)[number];

export interface ClusterOptions {
  readonly dataDir: string;
  readonly mode: 'allinone' | 'split';
  /** The driver attaches volumes (ControllerPublish, VolumeAttachments). */
  readonly attach: boolean;
  /** Split mode only: a fault proxy between the sidecar/node agent and the driver. */
  readonly faults?: FaultDecider;
}

export interface Cluster {
  readonly dataDir: string;
  readonly client: RestClient;
  /** The processes that can be killed. */
  readonly processes: readonly ProcessName[];
  readonly proxy?: FaultProxy;
  /** The driver's state dir (state.json, volumes/, snapshots/) and the node agent's root. */
  readonly driverStateDir: string;
  readonly nodeRoot: string;
  kill(name: ProcessName): Promise<void>;
  start(name: ProcessName): Promise<void>;
  /** Exits we did not cause (each restarted after a second, as a kubelet restarts a container). */
  readonly exits: readonly { name: ProcessName; code: number | null }[];
  /** SIGTERM everything (SIGKILL after a grace period); the proxy stops too. */
  stop(): Promise<void>;
}

const BIN = join(repoRoot(), 'bin', 'stowage');

export async function startCluster(o: ClusterOptions): Promise<Cluster> {
  const dataDir = o.dataDir;
  const port = await freeLoopbackPort();
  const nodeRoot = join(dataDir, 'node');
  const driverStateDir = join(dataDir, 'csi-hostpath');
  const kubeconfig = join(dataDir, 'kubeconfig');
  const driverDir = join(nodeRoot, 'plugins', DRIVER);
  const driverSocket = join(driverDir, o.faults ? 'driver.sock' : 'csi.sock');
  const csiSocket = join(driverDir, 'csi.sock');
  mkdirSync(join(dataDir, 'logs'), { recursive: true });
  if (o.mode === 'split') mkdirSync(driverDir, { recursive: true });

  const attachFlag = o.attach ? ['--enable-attach'] : [];
  const args: Record<ProcessName, string[]> = {
    up: [
      'up',
      '--port',
      String(port),
      '--data-dir',
      dataDir,
      '--node-name',
      NODE_NAME,
      '--no-container-runtime',
      ...attachFlag,
    ],
    api: ['up', '--port', String(port), '--data-dir', dataDir, '--no-node', '--no-controllers'],
    controllers: ['controllers', '--kubeconfig', kubeconfig],
    driver: [
      'csi-hostpath',
      '--endpoint',
      `unix://${driverSocket}`,
      '--node-id',
      NODE_NAME,
      '--state-dir',
      driverStateDir,
      ...attachFlag,
    ],
    // A short CSI timeout, so that a hung call is given up (and retried) within the run.
    sidecar: ['csi-sidecar', '--csi-address', `unix://${csiSocket}`, '--kubeconfig', kubeconfig, '--timeout', '5s'],
    registrar: [
      'csi-registrar',
      '--csi-address',
      csiSocket,
      '--kubelet-registration-path',
      csiSocket,
      '--plugin-registration-path',
      join(nodeRoot, 'plugins_registry'),
    ],
    node: [
      'node',
      '--kubeconfig',
      kubeconfig,
      '--node-name',
      NODE_NAME,
      '--root-dir',
      nodeRoot,
      '--backoff-cap',
      '2s',
      '--port',
      '0',
    ],
  };
  const children = new Map<ProcessName, { child: ChildProcess; exited: Promise<void>; killed: boolean }>();
  const exits: { name: ProcessName; code: number | null }[] = [];
  let stopping = false;

  /** Resolved by the API server's first incarnation (since the last kill) that says it is ready. */
  const ready = new EventEmitter();
  ready.setMaxListeners(0);

  const spawnOne = (name: ProcessName): void => {
    if (children.has(name)) return;
    const log = openSync(join(dataDir, 'logs', `${name}.log`), 'a');
    const isApi = name === 'up' || name === 'api';
    const child = spawn(process.execPath, [BIN, ...args[name]], { stdio: ['ignore', isApi ? 'pipe' : log, log] });
    closeSync(log);
    const entry = { child, exited: new Promise<void>((r) => child.once('exit', () => r())), killed: false };
    children.set(name, entry);
    child.once('exit', (code) => {
      if (children.get(name)?.child === child) children.delete(name);
      if (entry.killed || stopping) return;
      // A process that gives up (e.g. a sidecar whose driver does not answer at start, as
      // external-provisioner exits, or a server that could not start) is restarted by its
      // supervisor, as a kubelet restarts a container; the run records it.
      exits.push({ name, code });
      setTimeout(() => (stopping ? undefined : spawnOne(name)), 1_000);
    });
    if (!isApi) return;
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('Stowage is running')) {
        out = '';
        ready.emit(name);
      }
    });
  };

  const start = async (name: ProcessName): Promise<void> => {
    const isApi = name === 'up' || name === 'api';
    const isReady = isApi ? once(ready, name, { signal: AbortSignal.timeout(120_000) }) : undefined;
    spawnOne(name);
    // The API server (and with it `up`) is ready when it says so; the others converge by themselves.
    await isReady?.catch(() => {
      throw new Error(`${name} not ready within 120 s (see ${join(dataDir, 'logs', `${name}.log`)})`);
    });
  };

  const kill = async (name: ProcessName): Promise<void> => {
    const c = children.get(name);
    if (!c) return;
    c.killed = true;
    c.child.kill('SIGKILL');
    await c.exited;
  };

  let proxy: FaultProxy | undefined;
  const processes: ProcessName[] = o.mode === 'allinone' ? ['up'] : [...SPLIT_PROCESSES];
  const order: ProcessName[] =
    o.mode === 'allinone' ? ['up'] : ['api', 'driver', 'controllers', 'sidecar', 'registrar', 'node'];
  for (const name of order) {
    await start(name);
    if (name === 'driver' && o.faults)
      proxy = await startFaultProxy({ socket: csiSocket, upstream: driverSocket, decide: o.faults });
  }
  const client = new RestClient({ ...(await loadKubeconfig(kubeconfig)), timeoutMs: 10_000 });
  // `up` creates the built-in driver's CSIDriver object; split, the installer (here) does.
  if (o.mode === 'split') await ensureCsiDriver(client, o.attach);

  const stop = async (): Promise<void> => {
    stopping = true;
    const all = [...children.entries()];
    for (const [, c] of all) c.child.kill('SIGTERM');
    const timer = setTimeout(() => all.forEach(([, c]) => c.child.kill('SIGKILL')), 15_000);
    await Promise.all(all.map(([, c]) => c.exited));
    clearTimeout(timer);
    await proxy?.stop();
    client.close();
  };
  return {
    dataDir,
    client,
    processes,
    exits,
    ...(proxy ? { proxy } : {}),
    driverStateDir,
    nodeRoot,
    kill,
    start,
    stop,
  };
}

async function ensureCsiDriver(client: RestClient, attachRequired: boolean): Promise<void> {
  await client.resource('CSIDriver').create({
    apiVersion: 'storage.k8s.io/v1',
    kind: 'CSIDriver',
    metadata: { name: DRIVER },
    spec: { attachRequired, podInfoOnMount: true, volumeLifecycleModes: ['Persistent'], fsGroupPolicy: 'File' },
  });
}

/** The tail of a process's log, for a failure report. */
export function logTail(dataDir: string, name: ProcessName, lines = 20): string {
  try {
    return readFileSync(join(dataDir, 'logs', `${name}.log`), 'utf8')
      .trimEnd()
      .split('\n')
      .slice(-lines)
      .join('\n');
  } catch {
    return '';
  }
}
