import { accessSync, constants } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { startControlPlane } from './controlplane.js';
import { ensureDir } from '../util/fsutil.js';
import { startAllInOne, type AllInOne } from './allinone.js';
import { CliError } from './errors.js';
import { untilStopSignal } from './signals.js';
import { addEtcdFlags, openStoreFromFlags, type EtcdFlags } from './storeflags.js';
import { parseGoDuration, type RequestLimits } from '../api/limits.js';

export interface UpOptions extends EtcdFlags {
  readonly address: string;
  readonly port: string;
  readonly dataDir: string;
  /** commander's --no-controllers */
  readonly controllers?: boolean;
  /** commander's --no-hostpath */
  readonly hostpath?: boolean;
  /** commander's --no-node */
  readonly node?: boolean;
  readonly nodeName?: string;
  readonly enableAttach?: boolean;
  readonly maxRequestsInflight?: string;
  readonly maxMutatingRequestsInflight?: string;
  readonly requestTimeout?: string;
}

/** `stowage up`: everything in one process on SQLite under --data-dir (or on an existing etcd). */
export function upCommand(program: Command): void {
  const cmd = program
    .command('up')
    .description('run the API server and controllers in one process on an embedded SQLite store (or an existing etcd)')
    .option('--address <ip>', 'address to listen on', '127.0.0.1')
    .option('--port <port>', 'HTTPS port', '6443')
    .option('--data-dir <dir>', 'where state, certificates and the kubeconfig live', './stowage-data')
    .option('--no-controllers', 'do not run the controller manager in this process (run `stowage controllers` elsewhere)')
    .option('--no-node', 'do not run a node agent in this process')
    .option('--no-hostpath', 'do not run the built-in hostpath CSI driver and its registrar')
    .option('--node-name <name>', 'name of the node agent (default: the host name, lower-cased)')
    .option('--enable-attach', 'the built-in driver attaches volumes to nodes (ControllerPublish, VolumeAttachments)', false)
    .option('--max-requests-inflight <n>', 'read-only requests served at once, beyond which 429 (0 = no limit)', '400')
    .option('--max-mutating-requests-inflight <n>', 'mutating requests served at once, beyond which 429 (0 = no limit)', '200')
    .option('--request-timeout <duration>', 'deadline of a non-watch request, and the longest timeout= honoured (Go duration)', '1m0s');
  addEtcdFlags(cmd).action(async (o: UpOptions) => {
    await runUp(o);
  });
}

export async function runUp(o: UpOptions): Promise<void> {
  const port = Number(o.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new CliError(`invalid --port ${JSON.stringify(o.port)}: must be 0-65535`);
  const limits = requestLimitFlags(o);
  const dataDir = resolve(o.dataDir);
  try {
    ensureDir(dataDir, 0o700);
    accessSync(dataDir, constants.W_OK);
  } catch (e) {
    throw new CliError(`data dir ${dataDir} is not writable: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  const store = await openStoreFromFlags(o, dataDir);
  let plane;
  try {
    plane = await startControlPlane({ store, dataDir, address: o.address, port, controllers: o.controllers !== false, controllersInWorker: true, limits });
  } catch (e) {
    await store.close();
    const err = e as NodeJS.ErrnoException;
    if (err.code === 'EADDRINUSE') throw new CliError(`cannot listen on ${o.address}:${port}: address already in use`);
    if (err.code === 'EADDRNOTAVAIL') throw new CliError(`cannot listen on ${o.address}:${port}: address not available`);
    if (err.code === 'EACCES') throw new CliError(`cannot listen on ${o.address}:${port}: permission denied`);
    throw e;
  }
  let node: AllInOne | undefined;
  if (o.node !== false) {
    try {
      node = await startAllInOne({ client: plane.client, dataDir, hostpath: o.hostpath !== false, nodeName: o.nodeName, enableAttach: o.enableAttach === true });
    } catch (e) {
      await plane.close();
      await store.close();
      throw new CliError(`cannot start the node agent: ${(e as Error).message}`);
    }
  }
  process.stdout.write(
    [
      `Stowage is running: API server ${plane.api.url}, data in ${dataDir}${node ? `, node ${node.nodeName}` : ''}`,
      `  export KUBECONFIG=${plane.kubeconfigPath}`,
      `  kubectl get pv,pvc,sc -A`,
      `Stop with Ctrl-C.`,
      '',
    ].join('\n'),
  );
  await untilStopSignal();
  await node?.stop();
  await plane.close();
  await store.close();
}

/** kube-apiserver's flags of the same names. */
function requestLimitFlags(o: UpOptions): Partial<RequestLimits> {
  const count = (flag: string, v: string | undefined): number | undefined => {
    if (v === undefined) return undefined;
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0) throw new CliError(`invalid ${flag} ${JSON.stringify(v)}: must be a non-negative integer`);
    return n;
  };
  let requestTimeoutMs: number | undefined;
  if (o.requestTimeout !== undefined) {
    try {
      requestTimeoutMs = parseGoDuration(o.requestTimeout);
    } catch (e) {
      throw new CliError(`invalid --request-timeout ${JSON.stringify(o.requestTimeout)}: ${(e as Error).message}`);
    }
  }
  const out: { -readonly [K in keyof RequestLimits]?: RequestLimits[K] } = {};
  const r = count('--max-requests-inflight', o.maxRequestsInflight);
  const m = count('--max-mutating-requests-inflight', o.maxMutatingRequestsInflight);
  if (r !== undefined) out.maxRequestsInFlight = r;
  if (m !== undefined) out.maxMutatingRequestsInFlight = m;
  if (requestTimeoutMs !== undefined) out.requestTimeoutMs = requestTimeoutMs;
  return out;
}
