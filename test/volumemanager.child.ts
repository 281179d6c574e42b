/**
 * Entry point for test/volumemanager-sigkill.test.ts: runs the volume manager in its own process
 * until SIGTERM (or SIGKILL). Usage: node --import <hooks> test/volumemanager.child.ts <kubeconfig> <node> <rootDir> <driver> <endpoint>
 */
import { RestClient } from '../src/client/rest.js';
import { loadKubeconfig } from '../src/client/kubeconfig.js';
import { startVolumeManager } from '../src/node/volumemanager/volume-manager.js';

const [kubeconfig, nodeName, rootDir, driver, endpoint] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
];
const client = new RestClient(await loadKubeconfig(kubeconfig));
const stop = new AbortController();
const vm = await startVolumeManager({
  client,
  nodeName,
  rootDir,
  drivers: { endpoint: (d) => (d === driver ? endpoint : undefined) },
  signal: stop.signal,
  backoffCapMs: 1000,
});
process.stderr.write('volume manager started\n');
process.on('SIGTERM', () => {
  void vm.stop().then(() => {
    client.close();
    process.exit(0);
  });
});
