import { COMPONENTS, componentUserAgent } from '../kube/version.js';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { startControlPlane, type ControlPlane } from './controlplane.js';
import type { Store } from '../store/store.js';
import { untilAborted } from '../util/abort.js';
import { defaultNodeName, startAllInOne, type AllInOne } from './allinone.js';
import type { RestClient } from '../client/rest.js';
import { ensureNodeToken } from './nodetoken.js';
import { prepareDataDir } from './datadir.js';
import { CliError } from './errors.js';
import { DEFAULT_SANDBOX_IMAGE } from '../node/runtime/containerd.js';
import { runUntilSignalled } from './signals.js';
import { addContainerLogFlags, containerLogPolicy, type ContainerLogFlags } from './logflags.js';
import { addEtcdFlags, openStoreFromFlags, type EtcdFlags } from './storeflags.js';
import { parseGoDuration, type RequestLimits } from '../api/limits.js';
import { DEFAULT_SERVICE_CIDR, parseCidr } from '../api/resources/serviceip.js';
import { addNodeLifecycleFlags, nodeLifecycleOptions, type NodeLifecycleFlags } from './nodelifecycleflags.js';

export interface UpOptions extends EtcdFlags, RequestLimitFlags, NodeLifecycleFlags, Partial<ContainerLogFlags> {
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
  readonly rootDir?: string;
  readonly enableAttach?: boolean;
  /** commander's --no-default-class */
  readonly defaultClass?: boolean;
  readonly containerRuntimeEndpoint?: string;
  /** commander's --no-container-runtime */
  readonly containerRuntime?: boolean;
  readonly podInfraContainerImage?: string;
}

/** `stowage up`: everything in one process on SQLite under --data-dir (or on an existing etcd). */
export function upCommand(program: Command): void {
  const cmd = program
    .command('up')
    .description('run the API server and controllers in one process on an embedded SQLite store (or an existing etcd)')
    .option('--address <ip>', 'address to listen on', '127.0.0.1')
    .option('--port <port>', 'HTTPS port', '6443')
    .option('--data-dir <dir>', 'where state, certificates and the kubeconfig live', './stowage-data')
    .option(
      '--no-controllers',
      'do not run the controller manager in this process (run `stowage controllers` elsewhere)',
    )
    .option('--no-node', 'do not run a node agent in this process')
    .option('--no-hostpath', 'do not run the built-in hostpath CSI driver and its registrar')
    .option('--node-name <name>', 'name of the node agent (default: the host name, lower-cased)')
    .option(
      '--root-dir <dir>',
      "the node agent's root: plugins_registry/, plugins/ and pods/ (default: <data-dir>/node; /var/lib/kubelet for upstream manifests)",
    )
    .option(
      '--enable-attach',
      'the built-in driver attaches volumes to nodes (ControllerPublish, VolumeAttachments)',
      false,
    )
    .option('--no-default-class', 'do not create the default StorageClass "standard" for the built-in driver')
    .option('--container-runtime-endpoint <endpoint>', 'run pods on this CRI runtime instead of an embedded containerd')
    .option(
      '--no-container-runtime',
      'run no containers: pods get their volumes only (as when containerd and runc are not on PATH)',
    )
    .option(
      '--pod-infra-container-image <image>',
      'the sandbox ("pause") image of the embedded containerd (default: the one Stowage ships and imports at start)',
      DEFAULT_SANDBOX_IMAGE,
    );
  addContainerLogFlags(addNodeLifecycleFlags(addEtcdFlags(addRequestLimitFlags(cmd)))).action(async (o: UpOptions) => {
    await runUp(o);
  });
}

export async function runUp(o: UpOptions): Promise<void> {
  const port = Number(o.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new CliError(`invalid --port ${JSON.stringify(o.port)}: must be 0-65535`);
  // Flags first: a bad one leaves nothing behind.
  const limits = requestLimitFlags(o);
  serviceRangeFlag(o); // refused before anything starts
  await runUntilSignalled(async (signal) => {
    const dataDir = await prepareDataDir(resolve(o.dataDir));
    let up: Up;
    try {
      up = await start(o, dataDir.path, port, limits);
    } catch (e) {
      await dataDir.undo();
      throw e;
    }
    // Asked to stop while starting: stop without announcing a start.
    if (!signal.aborted) process.stdout.write(banner(up, dataDir.path));
    await untilAborted(signal);
    await up.node?.stop();
    await up.plane.close();
    await up.store.close();
  });
}

/** What `stowage up` prints once it runs (README.md shows it; test/up.test.ts holds them equal). */
function banner(up: Up, dataDir: string): string {
  return [
    `Stowage is running: API server ${up.plane.api.url}, data in ${dataDir}${up.node ? `, node ${up.node.nodeName}` : ''}`,
    `  export KUBECONFIG=${up.plane.kubeconfigPath}`,
    `  kubectl get nodes,csinodes,pv,pvc -A`,
    `  dashboard: ${up.plane.api.url}/dashboard (log in with the kubeconfig's token)`,
    `Stop with Ctrl-C.`,
    '',
  ].join('\n');
}

interface Up {
  readonly store: Store;
  readonly plane: ControlPlane;
  readonly node?: AllInOne;
}

/** Starts the store, the control plane and the node side; on failure closes what it started. */
async function start(o: UpOptions, dataDir: string, port: number, limits: Partial<RequestLimits>): Promise<Up> {
  const store: Store = await openStoreFromFlags(o, dataDir);
  let plane: ControlPlane;
  try {
    plane = await startControlPlane({
      store,
      dataDir,
      address: o.address,
      port,
      controllers: o.controllers !== false,
      controllersInWorker: true,
      limits,
      serviceClusterIpRange: serviceRangeFlag(o),
      nodeLifecycle: nodeLifecycleOptions(o),
    });
  } catch (e) {
    await store.close();
    const err = e as NodeJS.ErrnoException;
    if (err.code === 'EADDRINUSE') throw new CliError(`cannot listen on ${o.address}:${port}: address already in use`);
    if (err.code === 'EADDRNOTAVAIL')
      throw new CliError(`cannot listen on ${o.address}:${port}: address not available`);
    if (err.code === 'EACCES') throw new CliError(`cannot listen on ${o.address}:${port}: permission denied`);
    throw e;
  }
  if (o.node === false) return { store, plane };
  const nodeName = o.nodeName ?? defaultNodeName();
  // The node agent and the sidecar run as their own identities, as on separate hosts.
  const clients: RestClient[] = [];
  const closeClients = (): void => clients.forEach((c) => c.close());
  try {
    const nodeClient = plane.localClient(
      await ensureNodeToken(plane.client, nodeName),
      componentUserAgent(COMPONENTS.kubelet),
    );
    // The sidecar's own writes (its Lease, named as external-provisioner's) go as csi-provisioner;
    // the attacher and resizer inside it write with their own user agents.
    const sidecarClient = plane.localClient(plane.sidecarToken, componentUserAgent(COMPONENTS.provisioner));
    clients.push(nodeClient, sidecarClient);
    const node = await startAllInOne({
      client: plane.client,
      nodeClient,
      sidecarClient,
      dataDir,
      ...(o.rootDir !== undefined ? { rootDir: resolve(o.rootDir) } : {}),
      hostpath: o.hostpath !== false,
      nodeName,
      enableAttach: o.enableAttach === true,
      defaultClass: o.defaultClass !== false,
      clusterCaPem: plane.caPem,
      nodeAddress: o.address,
      metrics: plane.api.metrics,
      containerRuntime:
        o.containerRuntimeEndpoint !== undefined
          ? { endpoint: o.containerRuntimeEndpoint }
          : o.containerRuntime === false
            ? 'none'
            : { embedded: o.podInfraContainerImage ?? DEFAULT_SANDBOX_IMAGE },
      containerLogs: containerLogPolicy(o),
    });
    return { store, plane, node: { ...node, stop: async () => (await node.stop(), closeClients()) } };
  } catch (e) {
    closeClients();
    await plane.close();
    await store.close();
    throw new CliError(`cannot start the node agent: ${(e as Error).message}`);
  }
}

export interface RequestLimitFlags {
  readonly serviceClusterIpRange?: string;
  readonly maxRequestsInflight?: string;
  readonly maxMutatingRequestsInflight?: string;
  readonly requestTimeout?: string;
}

/** kube-apiserver's in-flight and deadline flags (shared with `stowage server`). */
export function addRequestLimitFlags(cmd: Command): Command {
  return cmd
    .option('--max-requests-inflight <n>', 'read-only requests served at once, beyond which 429 (0 = no limit)', '400')
    .option(
      '--max-mutating-requests-inflight <n>',
      'mutating requests served at once, beyond which 429 (0 = no limit)',
      '200',
    )
    .option(
      '--request-timeout <duration>',
      'deadline of a non-watch request, and the longest timeout= honoured (Go duration)',
      '1m0s',
    )
    .option('--service-cluster-ip-range <cidr>', 'IPv4 range Services get their ClusterIP from', DEFAULT_SERVICE_CIDR);
}

/** --service-cluster-ip-range, checked: a CliError for anything but an IPv4 CIDR of at least 4 addresses. */
export function serviceRangeFlag(o: RequestLimitFlags): string | undefined {
  if (o.serviceClusterIpRange === undefined) return undefined;
  try {
    parseCidr(o.serviceClusterIpRange);
  } catch (e) {
    throw new CliError(`invalid --service-cluster-ip-range: ${(e as Error).message}`);
  }
  return o.serviceClusterIpRange;
}

/** kube-apiserver's flags of the same names. */
export function requestLimitFlags(o: RequestLimitFlags): Partial<RequestLimits> {
  const count = (flag: string, v: string | undefined): number | undefined => {
    if (v === undefined) return undefined;
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0)
      throw new CliError(`invalid ${flag} ${JSON.stringify(v)}: must be a non-negative integer`);
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
