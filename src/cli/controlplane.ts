import { COMPONENTS, componentUserAgent } from '../kube/version.js';
import { setMaxListeners } from 'node:events';
import { writeFileSync } from 'node:fs';
import { createHash, randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Store } from '../store/store.js';
import { RestClient } from '../client/index.js';
import { Worker } from 'node:worker_threads';
import { runControllers } from '../controllers/manager.js';
import type { ControllersWorkerData, FromControllersWorker, ToControllersWorker } from '../controllers/worker.js';
import { newLogger } from '../util/log.js';
import type { MetricsRegistry } from '../util/metrics.js';
import { runNamespaceController } from '../controllers/namespace/run.js';
import { startApiServer, type ApiServer, type ApiServerOptions, type UserInfo } from '../api/server.js';
import { ensureServingMaterial, kubeconfigYaml } from '../api/tls.js';
import { runKubernetesServiceController } from '../api/kubernetesservice/run.js';
import { advertiseAddress } from '../api/kubernetesservice/decide.js';
import { DEFAULT_SERVICE_CIDR, firstServiceIp, parseCidr } from '../api/resources/serviceip.js';
import { firstInternalIPv4 } from '../node/nodestatus/host.js';
import { networkInterfaces } from 'node:os';
import type { NodeLifecycleOptions } from './nodelifecycleflags.js';
import {
  ADMIN_POLICY,
  COMPONENT_POLICY,
  CONTROLLER_MANAGER_USER,
  CSI_SIDECARS_GROUP,
  newGroupRulesAuthorizer,
} from '../api/authz.js';

const log = newLogger('controlplane');

/** The API server with what belongs to it: TLS material, admin kubeconfig, namespace lifecycle. */
export interface ControlPlane {
  readonly api: ApiServer;
  /** An admin client to this API server (for in-process components). */
  readonly client: RestClient;
  readonly adminToken: string;
  readonly caPem: string;
  readonly kubeconfigPath: string;
  /** The in-process CSI sidecars' token (group stowage:csi-sidecars); lives as long as this process. */
  readonly sidecarToken: string;
  /** A client to this API server over its private socket, authenticating with `token`. */
  localClient(token: string, userAgent?: string): RestClient;
  close(): Promise<void>;
}

/** The user of the in-process CSI sidecars (a service account's name, as their upstream deployment runs them). */
export const CSI_SIDECAR_USER = 'system:serviceaccount:kube-system:csi-sidecar';

export interface ControlPlaneOptions {
  readonly store: Store;
  readonly dataDir: string;
  readonly address: string;
  readonly port: number;
  readonly watchCacheHistory?: number;
  /** Run the controllers (PV binder, protection, attach/detach, namespace, scheduler). Default true. Without them the namespace controller still runs, so that namespaces can be deleted. */
  readonly controllers?: boolean;
  /**
   * Run them in a worker thread (a second core) instead of on the API server's event loop. Needs
   * the compiled JavaScript (the worker loads `dist/`), so the CLI asks for it and tests do not.
   */
  readonly controllersInWorker?: boolean;
  /** In-process controllers only: leave out the scheduler / attach-detach controller (tests run their own). */
  readonly scheduler?: boolean;
  readonly attachDetach?: boolean;
  /** Serving certificate and key (--tls-cert-file/--tls-private-key-file); default: generated under dataDir/pki. */
  readonly servingCert?: { readonly certPem: string; readonly keyPem: string };
  /** CA of client certificates (--client-ca-file); default: the cluster CA under dataDir/pki. */
  readonly clientCaPem?: string;
  /** The client certificate towards node endpoints (--kubelet-client-certificate/-key); default: issued under dataDir/pki. */
  readonly kubeletClient?: { readonly certPem: string; readonly keyPem: string };
  /** More bearer tokens (--token-auth-file), beside the generated admin token. */
  readonly tokens?: ReadonlyMap<string, UserInfo>;
  /** In-flight limits, request deadline and connection limits of the API server. */
  readonly limits?: ApiServerOptions['limits'];
  /** --service-cluster-ip-range of the API server. */
  readonly serviceClusterIpRange?: string;
  /** kube-apiserver's --advertise-address: this server's address in the `kubernetes` Service's endpoints (default: see advertiseAddress). */
  readonly advertiseAddress?: string;
  /** The node lifecycle controller's flags (--node-monitor-*, zone eviction limits); default kube's. */
  readonly nodeLifecycle?: NodeLifecycleOptions;
  /** The endpoint reconciler's interval and lease TTL (kube-apiserver: 10 s and 15 s); tests shorten them. */
  readonly endpointReconciler?: { readonly intervalMs: number; readonly ttlMs: number };
}

/** The user of the API server's own loopback client, as kube-apiserver's. */
export const APISERVER_USER = 'system:apiserver';

export async function startControlPlane(o: ControlPlaneOptions): Promise<ControlPlane> {
  const hosts = ['127.0.0.1', 'localhost', '::1'];
  if (!hosts.includes(o.address) && o.address !== '0.0.0.0' && o.address !== '::') hosts.push(o.address);
  const pki = ensureServingMaterial(join(o.dataDir, 'pki'), hosts);
  const localSocket = localSocketPath(o.dataDir);
  const controllersToken = randomBytes(24).toString('base64url');
  const sidecarToken = randomBytes(24).toString('base64url');
  const apiserverToken = randomBytes(24).toString('base64url');
  const api = await startApiServer({
    store: o.store,
    address: o.address,
    port: o.port,
    tls: o.servingCert ?? { certPem: pki.certPem, keyPem: pki.keyPem },
    tokens: new Map([
      [pki.adminToken, { name: 'admin', groups: ['system:masters'] }],
      // In-process components run as their own users; their tokens never leave this process.
      [controllersToken, { name: CONTROLLER_MANAGER_USER, groups: [] }],
      [apiserverToken, { name: APISERVER_USER, groups: ['system:masters'] }],
      [
        sidecarToken,
        {
          name: CSI_SIDECAR_USER,
          groups: ['system:serviceaccounts', 'system:serviceaccounts:kube-system', CSI_SIDECARS_GROUP],
        },
      ],
      ...(o.tokens ?? []),
    ]),
    authorizer: newGroupRulesAuthorizer([...ADMIN_POLICY, ...COMPONENT_POLICY]),
    clientCaPem: o.clientCaPem ?? pki.caCertPem,
    watchCacheHistory: o.watchCacheHistory,
    localSocketPath: localSocket,
    limits: o.limits,
    serviceClusterIpRange: o.serviceClusterIpRange,
    kubeletClient: o.kubeletClient ?? pki.kubeletClient,
  });
  const clientHost =
    o.address === '0.0.0.0'
      ? '127.0.0.1'
      : o.address === '::'
        ? '[::1]'
        : o.address.includes(':')
          ? `[${o.address}]`
          : o.address;
  const server = `https://${clientHost}:${api.port}`;
  const kubeconfigPath = join(o.dataDir, 'kubeconfig');
  writeFileSync(kubeconfigPath, kubeconfigYaml({ server, caCertPem: pki.caCertPem, token: pki.adminToken }), {
    mode: 0o600,
  });
  // In-process components talk to the API server over loopback like any other client: one path, one set of semantics.
  const localClient = (token: string, userAgent?: string): RestClient =>
    new RestClient({
      server: 'http://stowage-apiserver',
      socketPath: localSocket,
      token,
      maxSockets: 64,
      ...(userAgent ? { userAgent } : {}),
    });
  const client = localClient(pki.adminToken);
  const controllersClient = localClient(controllersToken, componentUserAgent(COMPONENTS.controllerManager));
  const stop = new AbortController();
  setMaxListeners(0, stop.signal);
  const controllers =
    o.controllers === false
      ? runNamespaceController({ client: controllersClient, signal: stop.signal, metrics: api.metrics })
      : o.controllersInWorker
        ? runControllersInWorker({
            data: { socketPath: localSocket, token: controllersToken, ...o.nodeLifecycle },
            signal: stop.signal,
            metrics: api.metrics,
          })
        : runControllers({
            client: controllersClient,
            signal: stop.signal,
            metrics: api.metrics,
            scheduler: o.scheduler,
            attachDetach: o.attachDetach,
            ...o.nodeLifecycle,
          });
  // A failure (caches that never synced) is logged here and ends the controllers, not the API server.
  const controllersDone = controllers.catch((e: unknown) =>
    log.error('controllers stopped', { error: e instanceof Error ? e.message : String(e) }),
  );
  const apiserverClient = localClient(apiserverToken, 'kube-apiserver');
  const kubernetesService = runKubernetesServiceController({
    client: apiserverClient,
    store: o.store,
    signal: stop.signal,
    serviceIp: firstServiceIp(parseCidr(o.serviceClusterIpRange ?? DEFAULT_SERVICE_CIDR)),
    advertiseAddress: advertiseAddress({
      flag: o.advertiseAddress,
      bindAddress: o.address,
      hostAddress: firstInternalIPv4(networkInterfaces()),
    }),
    securePort: api.port,
    intervalMs: o.endpointReconciler?.intervalMs,
    ttlMs: o.endpointReconciler?.ttlMs,
    metrics: api.metrics,
  }).catch((e: unknown) =>
    log.error('kubernetes service controller stopped', { error: e instanceof Error ? e.message : String(e) }),
  );
  return {
    api,
    client,
    adminToken: pki.adminToken,
    caPem: pki.caCertPem,
    kubeconfigPath,
    sidecarToken,
    localClient,
    close: async () => {
      stop.abort();
      await Promise.all([controllersDone, kubernetesService]);
      client.close();
      controllersClient.close();
      apiserverClient.close();
      await api.close();
    },
  };
}

/** The private socket of in-process clients; unix socket paths are limited to 107 bytes. */
function localSocketPath(dataDir: string): string {
  const p = join(dataDir, 'apiserver.sock');
  if (Buffer.byteLength(p) <= 100) return p;
  return join(tmpdir(), `stowage-${createHash('sha256').update(p).digest('hex').slice(0, 16)}.sock`);
}

/** Runs the controllers in a worker thread until `signal` aborts; their metrics join /metrics. */
async function runControllersInWorker(o: {
  data: ControllersWorkerData;
  signal: AbortSignal;
  metrics: MetricsRegistry;
}): Promise<void> {
  const worker = new Worker(new URL('../controllers/worker.js', import.meta.url), { workerData: o.data });
  let lastMetrics = '';
  const removeCollector = o.metrics.collector(() => lastMetrics);
  worker.on('message', (m: FromControllersWorker) => {
    if (m.kind === 'metrics') lastMetrics = m.text;
  });
  const exited = new Promise<void>((resolve) => {
    worker.once('error', (e) => log.error('controllers worker failed', { error: e.message }));
    worker.once('exit', () => resolve());
  });
  const stop = (): void => worker.postMessage({ kind: 'stop' } satisfies ToControllersWorker);
  if (o.signal.aborted) stop();
  else o.signal.addEventListener('abort', stop, { once: true });
  await exited;
  removeCollector();
}
