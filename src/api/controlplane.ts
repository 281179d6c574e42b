import { setMaxListeners } from 'node:events';
import { writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Store } from '../store/store.js';
import { RestClient } from '../client/index.js';
import { runControllers } from '../controllers/manager.js';
import { startNamespaceController } from '../controllers/namespace/namespace-controller.js';
import { startApiServer, type ApiServer } from './server.js';
import { ensureServingMaterial, kubeconfigYaml } from './tls.js';

/** The API server with what belongs to it: TLS material, admin kubeconfig, namespace lifecycle. */
export interface ControlPlane {
  readonly api: ApiServer;
  /** An admin client to this API server (for in-process components). */
  readonly client: RestClient;
  readonly adminToken: string;
  readonly caPem: string;
  readonly kubeconfigPath: string;
  close(): Promise<void>;
}

export interface ControlPlaneOptions {
  readonly store: Store;
  readonly dataDir: string;
  readonly address: string;
  readonly port: number;
  readonly watchCacheHistory?: number;
  /** Run the controller manager in-process (PV binder, protection). Default true. */
  readonly controllers?: boolean;
}

export async function startControlPlane(o: ControlPlaneOptions): Promise<ControlPlane> {
  const hosts = ['127.0.0.1', 'localhost', '::1'];
  if (!hosts.includes(o.address) && o.address !== '0.0.0.0' && o.address !== '::') hosts.push(o.address);
  const pki = ensureServingMaterial(join(o.dataDir, 'pki'), hosts);
  const localSocket = localSocketPath(o.dataDir);
  const api = await startApiServer({
    store: o.store,
    address: o.address,
    port: o.port,
    tls: { certPem: pki.certPem, keyPem: pki.keyPem },
    tokens: new Map([[pki.adminToken, { name: 'admin', groups: ['system:masters'] }]]),
    watchCacheHistory: o.watchCacheHistory,
    localSocketPath: localSocket,
  });
  const ns = startNamespaceController(api.registry);
  const clientHost = o.address === '0.0.0.0' ? '127.0.0.1' : o.address === '::' ? '[::1]' : o.address.includes(':') ? `[${o.address}]` : o.address;
  const server = `https://${clientHost}:${api.port}`;
  const kubeconfigPath = join(o.dataDir, 'kubeconfig');
  writeFileSync(kubeconfigPath, kubeconfigYaml({ server, caCertPem: pki.caCertPem, token: pki.adminToken }), { mode: 0o600 });
  // In-process components talk to the API server over loopback like any other client: one path, one set of semantics.
  const client = new RestClient({ server: 'http://stowage-apiserver', socketPath: localSocket, token: pki.adminToken, maxSockets: 64 });
  const stop = new AbortController();
  setMaxListeners(0, stop.signal);
  const controllers = o.controllers === false ? Promise.resolve() : runControllers({ client, signal: stop.signal, metrics: api.metrics });
  return {
    api,
    client,
    adminToken: pki.adminToken,
    caPem: pki.caCertPem,
    kubeconfigPath,
    close: async () => {
      stop.abort();
      ns.stop();
      await controllers;
      client.close();
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
