/**
 * The node agent (Stowage's kubelet for storage): wiring only. It keeps the Node and its Lease
 * (nodestatus), runs the plugin manager on `<rootDir>/plugins_registry` and the volume manager
 * for the pods bound to this node, which finds drivers through the plugin manager's registry.
 */
import { setMaxListeners } from 'node:events';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { newEventRecorder, type EventRecorder } from '../client/events.js';
import type { RestClient } from '../client/rest.js';
import { untilAborted } from '../util/abort.js';
import { DEFAULT_BACKOFF, realClock, type Clock } from '../util/backoff.js';
import { newLogger, type Logger } from '../util/log.js';
import { startNodeStatus, type NodeStatusManager } from './nodestatus/node-status.js';
import { gatherHostInfo, type HostInfo } from './nodestatus/host.js';
import type { CsiDriverRegistry } from './pluginmanager/csihandler/registry.js';
import { startPluginManager, type PluginManager } from './pluginmanager/plugin-manager.js';
import { whoAmIWhenReachable } from '../client/whoami.js';
import { NODE_USER_PREFIX, NODES_GROUP } from '../kube/names.js';
import { startVolumeManager, type VolumeManager } from './volumemanager/volume-manager.js';
import type { MetricsRegistry } from '../util/metrics.js';
import { connectRuntime, NO_RUNTIME, runtimeVersionString, type ContainerRuntimeInfo } from './runtime/info.js';
import type { CriClient } from './runtime/client.js';
import { ActivePods, startPodRuntimeManager, type PodRuntimeManager, type PodVolumes } from './runtime/manager.js';
import { watchRuntimeHealth } from './runtime/health.js';
import { DEFAULT_LOG_ROTATION, runContainerLogRotation, type LogRotationPolicy } from './runtime/log-rotation.js';
import { podUid } from './volumemanager/types.js';
import { subPathDir } from './volumemanager/operations/paths.js';
import { startNodeServer, type NodeServer } from './server/server.js';
import { shareRootDir } from './sharedroot.js';

export interface NodeAgentOptions {
  readonly client: RestClient;
  readonly nodeName: string;
  /** Kubelet-like root: `plugins_registry/`, `plugins/` and `pods/` are created under it. */
  readonly rootDir: string;
  /** Cap of the per-socket registration backoff (default 30 s; Kubernetes' is 2m2s). */
  readonly backoffCapMs?: number;
  /** Aborting stops the agent (as `stop()` does). */
  readonly signal: AbortSignal;
  readonly log?: Logger;
  readonly clock?: Clock;
  /** How often registered drivers are probed (default 5 s). */
  readonly healthPeriodMs?: number;
  /** The node Lease's duration (renewed every quarter of it) and the status check period (kubelet's nodeLeaseDurationSeconds / nodeStatusUpdateFrequency). */
  readonly leaseDurationSeconds?: number;
  readonly statusCheckMs?: number;
  /** Host facts to report (default: read from this machine). */
  readonly host?: HostInfo;
  /** Run the volume manager (pods' volumes staged, published, torn down). Default true. */
  readonly volumeManager?: boolean;
  readonly metrics?: MetricsRegistry;
  /**
   * The CRI endpoint (`unix:///…`), the kubelet's --container-runtime-endpoint. Without one the
   * node runs no containers and says so (a Node condition and a Warning event per pod).
   */
  readonly containerRuntimeEndpoint?: string;
  /** Volume-only on purpose (`up --no-container-runtime`): said at info level, not as a warning. */
  readonly noRuntimeAsked?: boolean;
  /**
   * The node's HTTPS endpoint for logs and exec (the kubelet's --address, --port and
   * --client-ca-file); none when left out.
   */
  readonly server?: { readonly address: string; readonly port: number; readonly clientCaPem: string };
  /** Container log rotation (the kubelet's containerLogMaxSize / containerLogMaxFiles); default 10Mi, 5. */
  readonly containerLogs?: LogRotationPolicy;
}

/** The directories the agent keeps under its root, named as the kubelet's. */
export interface NodeDirs {
  readonly root: string;
  /** Where registrars put `<driver>-reg.sock` (the kubelet's plugins_registry). */
  readonly pluginsRegistry: string;
  /** Where drivers keep their own sockets and state (the kubelet's plugins). */
  readonly plugins: string;
  readonly pods: string;
}

export interface NodeAgent {
  readonly dirs: NodeDirs;
  readonly pluginManager: PluginManager;
  /** The node's CSI drivers by name (endpoint, version), for the volume manager. */
  readonly csiDrivers: CsiDriverRegistry;
  readonly nodeStatus: NodeStatusManager;
  readonly recorder: EventRecorder;
  /** Undefined when started with `volumeManager: false`. */
  readonly volumeManager?: VolumeManager;
  /** The container runtime's client; undefined when the node has none. */
  readonly runtime?: CriClient;
  /** The node's HTTPS endpoint, when asked for. */
  readonly server?: NodeServer;
  /** Stops every loop; idempotent. The Node, Lease and registrations stay in the API. */
  stop(): Promise<void>;
}

export function nodeDirs(rootDir: string): NodeDirs {
  return {
    root: rootDir,
    pluginsRegistry: join(rootDir, 'plugins_registry'),
    plugins: join(rootDir, 'plugins'),
    pods: join(rootDir, 'pods'),
  };
}

/** Connects the container runtime when an endpoint is given, and says which (or that there is none). */
async function connectRuntimeLogged(
  o: Pick<NodeAgentOptions, 'containerRuntimeEndpoint' | 'noRuntimeAsked'>,
  log: Logger,
): Promise<Awaited<ReturnType<typeof connectRuntime>> | undefined> {
  const runtime =
    o.containerRuntimeEndpoint !== undefined ? await connectRuntime(o.containerRuntimeEndpoint) : undefined;
  if (runtime)
    log.info('container runtime connected', {
      endpoint: runtime.client.endpoint,
      runtime: runtimeVersionString(runtime.info),
    });
  else if (o.noRuntimeAsked)
    log.info('no container runtime, as asked: pods get their volumes but their containers do not run');
  else log.warn('no container runtime: pods get their volumes but their containers do not run');
  return runtime;
}

/** The runtime went down (`down` says why) or came back: the Node's status and the events the kubelet records. */
function onRuntimeHealth(
  c: {
    nodeName: string;
    runtimeInfo: Extract<ContainerRuntimeInfo, { kind: 'cri' }>;
    nodeStatus: NodeStatusManager;
    recorder: EventRecorder;
    log: Logger;
  },
  down: string | undefined,
): void {
  const { runtimeInfo, recorder, log } = c;
  const nodeRef = { apiVersion: 'v1', kind: 'Node', name: c.nodeName, uid: c.nodeName };
  c.nodeStatus.setRuntime({ ...runtimeInfo, ...(down !== undefined ? { down } : {}) });
  if (down !== undefined) {
    log.warn('container runtime is down', { endpoint: runtimeInfo.endpoint, error: down });
    recorder.event(
      nodeRef,
      'Warning',
      'ContainerRuntimeUnhealthy',
      `container runtime ${runtimeVersionString(runtimeInfo)} at ${runtimeInfo.endpoint} is down: ${down}`,
    );
    recorder.event(nodeRef, 'Normal', 'NodeNotReady', `Node ${c.nodeName} status is now: NodeNotReady`);
  } else {
    log.info('container runtime is up again', { endpoint: runtimeInfo.endpoint });
    recorder.event(nodeRef, 'Normal', 'NodeReady', `Node ${c.nodeName} status is now: NodeReady`);
  }
}

/** The pod runtime's view of the volume manager: each pod's mounted volumes and subPath directories. */
function podVolumes(vm: VolumeManager, rootDir: string): PodVolumes {
  return {
    mounted: (uid) =>
      new Map(
        vm.asw
          .mountedVolumesForPod(podUid(uid))
          .filter((m) => m.state === 'Mounted')
          .map((m) => [m.outerSpecName, m.hostPath]),
      ),
    subPathDir: (uid, volume, container, index) => subPathDir(rootDir, podUid(uid), volume, container, index),
  };
}

async function makeNodeDirs(dirs: NodeDirs): Promise<void> {
  for (const d of [dirs.root, dirs.pluginsRegistry, dirs.plugins, dirs.pods])
    await mkdir(d, { recursive: true, mode: 0o750 });
}

/** Who the credential is, once the API answers; a node credential must name this node (running as another node would have every write refused). */
async function whoAmIForNode(
  o: Pick<NodeAgentOptions, 'client' | 'signal' | 'nodeName'>,
  clock: Clock,
  log: Logger,
): Promise<Awaited<ReturnType<typeof whoAmIWhenReachable>>> {
  const me = await whoAmIWhenReachable(o.client, { clock, signal: o.signal, log });
  if (me.groups.includes(NODES_GROUP) && me.username !== NODE_USER_PREFIX + o.nodeName) {
    throw new Error(`the credential is ${me.username}'s, not node ${o.nodeName}'s`);
  }
  return me;
}

/** Starts the node agent: the Node exists and registered sockets are being registered on return. */
export async function startNodeAgent(o: NodeAgentOptions): Promise<NodeAgent> {
  const log = o.log ?? newLogger('node');
  const clock = o.clock ?? realClock;
  const me = await whoAmIForNode(o, clock, log);
  const dirs = nodeDirs(o.rootDir);
  await makeNodeDirs(dirs);
  // The kubelet refuses to start when its runtime does not answer; so do we.
  const runtime = await connectRuntimeLogged(o, log);
  const runtimeInfo = runtime?.info ?? NO_RUNTIME;
  // Mount propagation into and out of containers needs the root dir on a shared mount.
  const sharedRoot = runtime ? await shareRootDir(dirs.root, log) : undefined;
  const recorder = newEventRecorder({
    client: o.client,
    component: 'stowage-node',
    host: o.nodeName,
    clock,
    log: log.child('events'),
  });
  // An endpoint bound to one address is where the node is reached: that address is its InternalIP
  // (and the pods' hostIP), as the kubelet's --node-ip would make it.
  const bound = o.server && o.server.address !== '0.0.0.0' && o.server.address !== '::' ? o.server.address : undefined;
  const host0 = o.host ?? gatherHostInfo();
  const host: HostInfo = bound ? { ...host0, internalIP: bound } : host0;
  let server: NodeServer | undefined;
  let nodeStatus: NodeStatusManager;
  try {
    if (o.server) {
      server = await startNodeServer({
        ...o.server,
        hosts: [...new Set([o.nodeName, host.hostname, host.internalIP].filter((h): h is string => !!h))],
        nodeName: o.nodeName,
        getPod: (namespace, name) => o.client.resource('Pod').getIfExists(name, { namespace }),
        cri: runtime?.client,
        log: log.child('server'),
      });
    }
    const endpoint = server ? { port: server.port } : undefined;
    nodeStatus = await startNodeStatus(
      {
        client: o.client,
        nodeName: o.nodeName,
        host,
        clock,
        log: log.child('nodestatus'),
        runtime: runtimeInfo,
        endpoint,
        leaseDurationSeconds: o.leaseDurationSeconds,
        statusCheckMs: o.statusCheckMs,
      },
      o.signal,
    );
  } catch (e) {
    await server?.close();
    runtime?.client.close();
    await recorder.close();
    throw e;
  }
  let pluginManager: PluginManager;
  try {
    pluginManager = await startPluginManager({
      client: o.client,
      nodeName: o.nodeName,
      registryDir: dirs.pluginsRegistry,
      backoff: { ...DEFAULT_BACKOFF, capMs: o.backoffCapMs ?? DEFAULT_BACKOFF.capMs },
      recorder,
      clock,
      healthPeriodMs: o.healthPeriodMs,
      log: log.child('pluginmanager'),
    });
  } catch (e) {
    await nodeStatus.stop();
    await server?.close();
    await recorder.close();
    runtime?.client.close();
    throw e;
  }
  const activePods = runtime ? new ActivePods() : undefined;
  const vmStop = new AbortController();
  setMaxListeners(0, vmStop.signal); // every informer and operation of the volume manager listens
  let volumeManager: VolumeManager | undefined;
  if (o.volumeManager !== false) {
    const drivers = pluginManager.csiDrivers;
    volumeManager = await startVolumeManager({
      client: o.client,
      // Under a node credential the Node authorizer refuses cluster-wide reads: fetch objects one by one.
      nodeScopedReads: me.groups.includes(NODES_GROUP),
      nodeName: o.nodeName,
      hostIP: host.internalIP,
      rootDir: dirs.root,
      drivers: { endpoint: (name) => drivers.getDriver(name)?.endpoint },
      signal: vmStop.signal,
      metrics: o.metrics,
      backoffCapMs: o.backoffCapMs,
      clock,
      log: log.child('volumemanager'),
      volumeOnly: runtime === undefined,
      ...(activePods ? { runtimeActive: (uid: string) => activePods.isActive(uid) } : {}),
    });
  }
  let podRuntime: PodRuntimeManager | undefined;
  if (runtime && activePods && volumeManager) {
    const vm = volumeManager;
    podRuntime = await startPodRuntimeManager({
      client: o.client,
      cri: runtime.client,
      nodeName: o.nodeName,
      rootDir: dirs.root,
      hostIP: host.internalIP ?? '127.0.0.1',
      allocatable: { cpu: String(host.cpus), memory: String(host.memoryBytes) },
      volumes: podVolumes(vm, dirs.root),
      activePods,
      recorder,
      signal: vmStop.signal,
      log: log.child('runtime'),
    });
  }
  const logRotation = runtime
    ? runContainerLogRotation({
        cri: runtime.client,
        policy: o.containerLogs ?? DEFAULT_LOG_ROTATION,
        signal: vmStop.signal,
        log: log.child('logs'),
      })
    : undefined;
  const runtimeHealth =
    runtime && runtimeInfo.kind === 'cri'
      ? watchRuntimeHealth({
          cri: runtime.client,
          clock,
          signal: vmStop.signal,
          onChange: (down) => onRuntimeHealth({ nodeName: o.nodeName, runtimeInfo, nodeStatus, recorder, log }, down),
        })
      : undefined;
  log.info('node agent started', { node: o.nodeName, root: o.rootDir });

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      // Volumes stay mounted: a restarted agent reconstructs them and never unmounts a live pod's.
      vmStop.abort();
      await runtimeHealth;
      await logRotation;
      await podRuntime?.stop();
      await volumeManager?.stop();
      await pluginManager.stop();
      await nodeStatus.stop();
      await server?.close();
      await recorder.close();
      runtime?.client.close();
      await sharedRoot?.release();
      log.info('node agent stopped', { node: o.nodeName });
    })();
    return stopping;
  };
  if (o.signal.aborted) await stop();
  else o.signal.addEventListener('abort', () => void stop(), { once: true });

  return {
    dirs,
    pluginManager,
    csiDrivers: pluginManager.csiDrivers,
    nodeStatus,
    recorder,
    volumeManager,
    runtime: runtime?.client,
    server,
    stop,
  };
}

/** Runs the node agent until `signal` aborts, then stops it (what `stowage node` does). */
export async function runNodeAgent(o: NodeAgentOptions): Promise<void> {
  const agent = await startNodeAgent(o);
  await untilAborted(o.signal);
  await agent.stop();
}
