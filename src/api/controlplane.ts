import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Store } from '../store/store.js';
import { startNamespaceController } from '../controllers/namespace/namespace-controller.js';
import { startApiServer, type ApiServer } from './server.js';
import { ensureServingMaterial, kubeconfigYaml } from './tls.js';

/** The API server with what belongs to it: TLS material, admin kubeconfig, namespace lifecycle. */
export interface ControlPlane {
  readonly api: ApiServer;
  readonly adminToken: string;
  readonly caPem: string;
  readonly kubeconfigPath: string;
  close(): Promise<void>;
}

export async function startControlPlane(o: { store: Store; dataDir: string; address: string; port: number; watchCacheHistory?: number }): Promise<ControlPlane> {
  const hosts = ['127.0.0.1', 'localhost', '::1'];
  if (!hosts.includes(o.address) && o.address !== '0.0.0.0' && o.address !== '::') hosts.push(o.address);
  const pki = ensureServingMaterial(join(o.dataDir, 'pki'), hosts);
  const api = await startApiServer({
    store: o.store,
    address: o.address,
    port: o.port,
    tls: { certPem: pki.certPem, keyPem: pki.keyPem },
    tokens: new Map([[pki.adminToken, { name: 'admin', groups: ['system:masters'] }]]),
    watchCacheHistory: o.watchCacheHistory,
  });
  const ns = startNamespaceController(api.registry);
  const clientHost = o.address === '0.0.0.0' ? '127.0.0.1' : o.address === '::' ? '[::1]' : o.address.includes(':') ? `[${o.address}]` : o.address;
  const server = `https://${clientHost}:${api.port}`;
  const kubeconfigPath = join(o.dataDir, 'kubeconfig');
  writeFileSync(kubeconfigPath, kubeconfigYaml({ server, caCertPem: pki.caCertPem, token: pki.adminToken }), { mode: 0o600 });
  return {
    api,
    adminToken: pki.adminToken,
    caPem: pki.caCertPem,
    kubeconfigPath,
    close: async () => {
      ns.stop();
      await api.close();
    },
  };
}
