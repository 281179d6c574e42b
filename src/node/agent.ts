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
import type { HostInfo } from './nodestatus/host.js';
import type { CsiDriverRegistry } from './pluginmanager/csihandler/registry.js';
import { startPluginManager, type PluginManager } from './pluginmanager/plugin-manager.js';
import { startVolumeManager, type VolumeManager } from './volumemanager/volume-manager.js';
import type { MetricsRegistry } from '../util/metrics.js';

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
  /** Host facts to report (default: read from this machine). */
  readonly host?: HostInfo;
  /** Run the volume manager (pods' volumes staged, published, torn down). Default true. */
  readonly volumeManager?: boolean;
  readonly metrics?: MetricsRegistry;
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
  /** Stops every loop; idempotent. The Node, Lease and registrations stay in the API. */
  stop(): Promise<void>;
}

export function nodeDirs(rootDir: string): NodeDirs {
  return { root: rootDir, pluginsRegistry: join(rootDir, 'plugins_registry'), plugins: join(rootDir, 'plugins'), pods: join(rootDir, 'pods') };
}

/** Starts the node agent: the Node exists and registered sockets are being registered on return. */
export async function startNodeAgent(o: NodeAgentOptions): Promise<NodeAgent> {
  const log = o.log ?? newLogger('node');
  const clock = o.clock ?? realClock;
  const dirs = nodeDirs(o.rootDir);
  for (const d of [dirs.root, dirs.pluginsRegistry, dirs.plugins, dirs.pods]) await mkdir(d, { recursive: true, mode: 0o750 });
  const recorder = newEventRecorder({ client: o.client, component: 'stowage-node', host: o.nodeName, clock, log: log.child('events') });
  const nodeStatus = await startNodeStatus({ client: o.client, nodeName: o.nodeName, host: o.host, clock, log: log.child('nodestatus') }, o.signal);
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
    await recorder.close();
    throw e;
  }
  const vmStop = new AbortController();
  setMaxListeners(0, vmStop.signal); // every informer and operation of the volume manager listens
  let volumeManager: VolumeManager | undefined;
  if (o.volumeManager !== false) {
    const drivers = pluginManager.csiDrivers;
    volumeManager = await startVolumeManager({
      client: o.client,
      nodeName: o.nodeName,
      rootDir: dirs.root,
      drivers: { endpoint: (name) => drivers.getDriver(name)?.endpoint },
      signal: vmStop.signal,
      metrics: o.metrics,
      backoffCapMs: o.backoffCapMs,
      clock,
      log: log.child('volumemanager'),
    });
  }
  log.info('node agent started', { node: o.nodeName, root: o.rootDir });

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      // Volumes stay mounted: a restarted agent reconstructs them and never unmounts a live pod's.
      vmStop.abort();
      await volumeManager?.stop();
      await pluginManager.stop();
      await nodeStatus.stop();
      await recorder.close();
      log.info('node agent stopped', { node: o.nodeName });
    })();
    return stopping;
  };
  if (o.signal.aborted) await stop();
  else o.signal.addEventListener('abort', () => void stop(), { once: true });

  return { dirs, pluginManager, csiDrivers: pluginManager.csiDrivers, nodeStatus, recorder, volumeManager, stop };
}

/** Runs the node agent until `signal` aborts, then stops it (what `stowage node` does). */
export async function runNodeAgent(o: NodeAgentOptions): Promise<void> {
  const agent = await startNodeAgent(o);
  await untilAborted(o.signal);
  await agent.stop();
}
