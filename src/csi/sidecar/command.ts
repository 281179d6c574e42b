/** `stowage csi-sidecar`: the CSI controller sidecar as its own process. */
import { InvalidArgumentError, type Command } from 'commander';
import { RestClient, loadKubeconfig } from '../../client/index.js';
import { CliError } from '../../cli/errors.js';
import { parsePositiveDuration } from '../../cli/flags.js';
import { newLogger } from '../../util/log.js';
import { CsiClient } from '../client.js';
import { runCsiSidecar, runCsiSidecarWithLeaderElection } from './sidecar.js';

export { parsePositiveDuration as parseDuration };

function positiveInt(v: string): number {
  const n = Number(v);
  if (!/^\d+$/.test(v) || n < 1) throw new InvalidArgumentError('must be a positive integer');
  return n;
}

interface Opts {
  csiAddress: string;
  kubeconfig: string;
  leaderElect: boolean;
  workers: number;
  timeout: number;
  provisioner: boolean;
  attacher: boolean;
  resizer: boolean;
  extraCreateMetadata: boolean;
  enableCapacity: boolean;
  capacityNamespace: string;
  capacityPollInterval: number;
  capacityForImmediateBinding: boolean;
}

/** Adds `stowage csi-sidecar --csi-address … --kubeconfig … [--leader-elect]`. Runs until SIGINT/SIGTERM. */
export function sidecarCommand(program: Command): Command {
  return program
    .command('csi-sidecar')
    .description('run the CSI controller sidecar (provisioner, attacher, resizer) next to a CSI driver')
    .requiredOption('--csi-address <unix:///path>', "the driver's controller endpoint")
    .requiredOption('--kubeconfig <path>', "kubeconfig with the sidecar's credentials")
    .option('--leader-elect', 'hold a per-driver Lease so that only one replica is active', false)
    .option('--workers <n>', 'workers per queue', positiveInt, 4)
    .option('--timeout <duration>', 'timeout of each CSI call', parsePositiveDuration, 15_000)
    .option('--extra-create-metadata', 'pass csi.storage.k8s.io/pvc/name, pvc/namespace and pv/name to CreateVolume', false)
    .option('--enable-capacity', 'publish CSIStorageCapacity objects from GetCapacity', false)
    .option('--capacity-namespace <ns>', 'namespace of the CSIStorageCapacity objects', 'kube-system')
    .option('--capacity-poll-interval <duration>', 'how often GetCapacity is polled', parsePositiveDuration, 60_000)
    .option('--capacity-for-immediate-binding', 'track Immediate classes too', false)
    .option('--no-provisioner', 'do not provision or delete volumes')
    .option('--no-attacher', 'do not attach or detach volumes')
    .option('--no-resizer', 'do not expand volumes')
    .action(async (opts: Opts) => {
      let cfg;
      try {
        cfg = await loadKubeconfig(opts.kubeconfig);
      } catch (e) {
        throw new CliError(`cannot load kubeconfig ${opts.kubeconfig}: ${(e as Error).message}`);
      }
      const log = newLogger('csi-sidecar');
      const client = new RestClient(cfg);
      const csi = new CsiClient({ endpoint: opts.csiAddress, log: log.child('csi') });
      const stop = new AbortController();
      const onSignal = (): void => stop.abort();
      process.once('SIGINT', onSignal);
      process.once('SIGTERM', onSignal);
      try {
        const common = {
          client,
          csi,
          signal: stop.signal,
          workers: opts.workers,
          csiTimeoutMs: opts.timeout,
          controllers: { provisioner: opts.provisioner, attacher: opts.attacher, resizer: opts.resizer },
          provisioner: { extraCreateMetadata: opts.extraCreateMetadata },
          ...(opts.enableCapacity
            ? { capacity: { namespace: opts.capacityNamespace, pollMs: opts.capacityPollInterval, immediateToo: opts.capacityForImmediateBinding } }
            : {}),
          log,
        };
        if (opts.leaderElect) {
          // The Lease is per driver, so the name must be known before campaigning.
          await csi.connect({ signal: stop.signal });
          const info = await csi.getPluginInfo({ signal: stop.signal });
          await runCsiSidecarWithLeaderElection({ ...common, driverName: info.name });
        } else {
          await runCsiSidecar(common);
        }
      } catch (e) {
        if (!stop.signal.aborted) throw new CliError(`csi-sidecar: ${(e as Error).message}`);
      } finally {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
        csi.close();
        client.close();
      }
    });
}
