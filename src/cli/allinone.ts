import { setMaxListeners } from 'node:events';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { RestClient } from '../client/index.js';
import { ConflictError, AlreadyExistsError, ignoreNotFound } from '../util/errors.js';
import { Worker } from 'node:worker_threads';
import type { FromHostpathWorker, HostpathWorkerData, ToHostpathWorker } from '../csi/hostpath/worker.js';
import { DEFAULT_DRIVER_NAME } from '../csi/hostpath/driver.js';
import { DEFAULT_CLASS_NAME, ensureDefaultStorageClass } from './defaultclass.js';
import { runRegistrar } from '../csi/registrar/registrar.js';
import { runCsiSidecar } from '../csi/sidecar/sidecar.js';
import type { MetricsRegistry } from '../util/metrics.js';
import { startNodeAgent, type NodeAgent } from '../node/agent.js';
import { ensureDir } from '../util/fsutil.js';
import {
  missingRuntimePrograms,
  startEmbeddedContainerd,
  type EmbeddedContainerd,
} from '../node/runtime/containerd.js';
import { newLogger } from '../util/log.js';
import { agentImagesDir } from './images.js';
import { importStartupImages, socketOf } from '../node/runtime/image-import.js';
import { SHIPPED_SANDBOX_IMAGE } from '../node/runtime/pause/image.js';
import type { LogRotationPolicy } from '../node/runtime/log-rotation.js';

const log = newLogger('up');

export interface AllInOneOptions {
  /** The admin's client: creates the CSIDriver and the default StorageClass. */
  readonly client: RestClient;
  /** The node agent's client, with the node's own credential (default: `client`). */
  readonly nodeClient?: RestClient;
  /** The CSI sidecar's client, with its own credential (default: `client`). */
  readonly sidecarClient?: RestClient;
  readonly dataDir: string;
  /** The node agent's root dir (plugins_registry/, plugins/, pods/; default `<dataDir>/node`). */
  readonly rootDir?: string;
  /** Leave the built-in hostpath driver (and its registrar and sidecar) out. */
  readonly hostpath: boolean;
  /** The built-in driver publishes volumes to nodes (ControllerPublish); its CSIDriver requires attach. */
  readonly enableAttach?: boolean;
  readonly nodeName?: string;
  /** Create the default StorageClass `standard` for the built-in driver when no default class exists (default true). */
  readonly defaultClass?: boolean;
  /**
   * Where pods' containers run: a given CRI endpoint; an embedded containerd (with this sandbox
   * image) when containerd and runc are on PATH, else none; or none.
   */
  readonly containerRuntime?: { readonly endpoint: string } | { readonly embedded: string } | 'none';
  /** Container log rotation (default: the kubelet's 10Mi, 5 files). */
  readonly containerLogs?: LogRotationPolicy;
  /** The cluster CA: the node endpoint (on a free port) accepts the API server's certificate from it. */
  readonly clusterCaPem?: string;
  /** Where the node endpoint listens (`up --address`; default loopback); a specific address is also the node's InternalIP. */
  readonly nodeAddress?: string;
  /** Where the sidecar's and the node's CSI call histograms go (`up`: the API server's /metrics). */
  readonly metrics?: MetricsRegistry;
}

export interface AllInOne {
  readonly nodeName: string;
  readonly agent: NodeAgent;
  stop(): Promise<void>;
}

/** The node agent's name when none is given: the host name, lower-cased as the kubelet does. */
export function defaultNodeName(): string {
  return hostname().toLowerCase();
}

/**
 * The node side of `stowage up`: one node agent (root `--root-dir`, default `<data-dir>/node`) and, unless disabled,
 * the built-in hostpath driver with its registrar (which registers it with that agent the way
 * node-driver-registrar does with a kubelet) and its controller sidecar (provision, attach, resize).
 */
export async function startAllInOne(o: AllInOneOptions): Promise<AllInOne> {
  const nodeName = o.nodeName ?? defaultNodeName();
  const stop = new AbortController();
  setMaxListeners(0, stop.signal);
  // On stop the driver goes away while its sidecar or registrar may still be starting: what they
  // fail with then is the stop we asked for, not an error worth reporting.
  const unlessStopping =
    (what: string) =>
    (e: unknown): void => {
      if (!stop.signal.aborted) log.error(what, { error: e instanceof Error ? e.message : String(e) });
    };
  // The agent stops first, its plugin manager with it, and only then the driver and its registrar:
  // a registrar removing its socket under a registration still in flight is a plugin gone
  // mid-registration (a warning), not the stop that was asked for.
  const agentStop = new AbortController();
  const rootDir = o.rootDir ?? join(o.dataDir, 'node');
  const containerd = await startRuntime(o);
  let agent: NodeAgent;
  try {
    const endpoint =
      containerd?.endpoint ??
      (typeof o.containerRuntime === 'object' && 'endpoint' in o.containerRuntime
        ? o.containerRuntime.endpoint
        : undefined);
    agent = await startNodeAgent({
      client: o.nodeClient ?? o.client,
      nodeName,
      rootDir,
      signal: agentStop.signal,
      containerRuntimeEndpoint: endpoint,
      noRuntimeAsked: o.containerRuntime === 'none',
      ...(o.containerLogs ? { containerLogs: o.containerLogs } : {}),
      ...(o.metrics ? { metrics: o.metrics } : {}),
      ...(o.clusterCaPem
        ? { server: { address: o.nodeAddress ?? '127.0.0.1', port: 0, clientCaPem: o.clusterCaPem } }
        : {}),
    });
  } catch (e) {
    await containerd?.stop();
    throw e;
  }
  const background: Promise<unknown>[] = [];
  if (o.hostpath) {
    const driverDir = join(agent.dirs.plugins, DEFAULT_DRIVER_NAME);
    ensureDir(driverDir, 0o750);
    const socket = join(driverDir, 'csi.sock');
    const attach = o.enableAttach === true;
    const driver = await startHostpathWorker(
      { endpoint: socket, nodeId: nodeName, stateDir: join(o.dataDir, 'csi-hostpath'), enableAttach: attach },
      stop.signal,
    );
    background.push(driver.stopped);
    await ensureCsiDriver(o.client, DEFAULT_DRIVER_NAME, { attachRequired: attach });
    if (o.defaultClass !== false && (await ensureDefaultStorageClass(o.client, DEFAULT_DRIVER_NAME))) {
      log.info('created the default StorageClass', { name: DEFAULT_CLASS_NAME, provisioner: DEFAULT_DRIVER_NAME });
    }
    background.push(
      runCsiSidecar({
        client: o.sidecarClient ?? o.client,
        csiAddress: socket,
        signal: stop.signal,
        ...(o.metrics ? { operationMetrics: o.metrics } : {}),
      }).catch(unlessStopping('built-in CSI sidecar stopped')),
    );
    background.push(
      runRegistrar({
        csiAddress: socket,
        kubeletRegistrationPath: socket,
        pluginRegistrationPath: agent.dirs.pluginsRegistry,
        signal: stop.signal,
      }).catch(unlessStopping('built-in registrar stopped')),
    );
  }
  return {
    nodeName,
    agent,
    stop: async () => {
      agentStop.abort();
      await agent.stop();
      stop.abort();
      await Promise.allSettled(background);
      await containerd?.stop();
    },
  };
}

/** The embedded containerd, when asked for and possible; otherwise says why pods will run no containers. */
async function startRuntime(o: AllInOneOptions): Promise<EmbeddedContainerd | undefined> {
  const want = o.containerRuntime;
  if (want === undefined || want === 'none' || 'endpoint' in want) return undefined;
  const missing = missingRuntimePrograms();
  if (missing.length > 0) {
    log.warn(
      `no embedded container runtime: ${missing.join(' and ')} not on PATH; pods get their volumes but their containers do not run`,
    );
    return undefined;
  }
  const dir = join(o.dataDir, 'containerd');
  const containerd = await startEmbeddedContainerd({ dir, sandboxImage: want.embedded, log: log.child('containerd') });
  // Offline images before any pod: the shipped sandbox image and k3s' `<data-dir>/agent/images/`.
  await importStartupImages({
    socket: socketOf(containerd.endpoint),
    workDir: dir,
    imagesDir: agentImagesDir(o.dataDir),
    shipSandbox: want.embedded === SHIPPED_SANDBOX_IMAGE,
    log: log.child('images'),
  });
  return containerd;
}

/** Creates or updates the CSIDriver object of a built-in driver. */
async function ensureCsiDriver(client: RestClient, name: string, spec: { attachRequired: boolean }): Promise<void> {
  const api = client.resource('CSIDriver');
  // Persistent (claims) and Ephemeral (inline `csi:` pod volumes): the built-in driver serves both.
  const want = {
    attachRequired: spec.attachRequired,
    podInfoOnMount: true,
    volumeLifecycleModes: ['Persistent', 'Ephemeral'],
    fsGroupPolicy: 'File',
  };
  for (let i = 0; i < 5; i++) {
    try {
      const cur = await api.get(name);
      const modes = cur.spec?.volumeLifecycleModes ?? [];
      const same =
        cur.spec?.attachRequired === want.attachRequired &&
        cur.spec?.podInfoOnMount === want.podInfoOnMount &&
        want.volumeLifecycleModes.every((m) => modes.includes(m));
      if (same) return;
      // attachRequired and volumeLifecycleModes are immutable: replace the object.
      await api.delete(name);
    } catch (e) {
      ignoreNotFound(e);
    }
    try {
      await api.create({ apiVersion: 'storage.k8s.io/v1', kind: 'CSIDriver', metadata: { name }, spec: want });
      return;
    } catch (e) {
      if (!(e instanceof AlreadyExistsError) && !(e instanceof ConflictError)) throw e;
    }
  }
}

/**
 * Starts the built-in driver in a worker thread (its mounts and state writes off the API server's
 * event loop); resolves once it listens. `stopped` settles when the thread ends after `signal`.
 */
async function startHostpathWorker(data: HostpathWorkerData, signal: AbortSignal): Promise<{ stopped: Promise<void> }> {
  const worker = new Worker(new URL('../csi/hostpath/worker.js', import.meta.url), { workerData: data });
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    worker.on('message', (m: FromHostpathWorker) =>
      m.kind === 'listening' ? resolve() : reject(new Error(`hostpath driver: ${m.message}`)),
    );
    worker.once('error', reject);
    void exited.then(() => reject(new Error('hostpath driver thread exited')));
  });
  const stopWorker = (): void => worker.postMessage({ kind: 'stop' } satisfies ToHostpathWorker);
  if (signal.aborted) stopWorker();
  else signal.addEventListener('abort', stopWorker, { once: true });
  return { stopped: exited };
}
