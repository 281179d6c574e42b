/** `stowage csi-sidecar`: the CSI controller sidecar as its own process. */
import type { Command } from 'commander';
import { RestClient } from '../client/index.js';
import { CsiClient } from '../csi/client.js';
import { runCsiSidecar, runCsiSidecarWithLeaderElection } from '../csi/sidecar/sidecar.js';
import { newLogger } from '../util/log.js';
import { CliError } from './errors.js';
import { parsePositiveDuration, positiveInt } from './flags.js';
import { loadKubeconfigOrFail } from './kubeconfig.js';
import { runUntilSignalled } from './signals.js';

interface SidecarFlags {
  readonly csiAddress: string;
  readonly kubeconfig: string;
  readonly leaderElect: boolean;
  readonly workers: number;
  readonly timeout: number;
  readonly provisioner: boolean;
  readonly attacher: boolean;
  readonly resizer: boolean;
  readonly extraCreateMetadata: boolean;
  readonly enableCapacity: boolean;
  readonly capacityNamespace: string;
  readonly capacityPollInterval: number;
  readonly capacityForImmediateBinding: boolean;
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
    .action(async (f: SidecarFlags) => {
      const cfg = await loadKubeconfigOrFail(f.kubeconfig);
      const log = newLogger('csi-sidecar');
      const client = new RestClient(cfg);
      const csi = new CsiClient({ endpoint: f.csiAddress, log: log.child('csi') });
      try {
        await runUntilSignalled(async (signal) => {
          const options = {
            client,
            csi,
            signal,
            workers: f.workers,
            csiTimeoutMs: f.timeout,
            controllers: { provisioner: f.provisioner, attacher: f.attacher, resizer: f.resizer },
            provisioner: { extraCreateMetadata: f.extraCreateMetadata },
            ...(f.enableCapacity ? { capacity: { namespace: f.capacityNamespace, pollMs: f.capacityPollInterval, immediateToo: f.capacityForImmediateBinding } } : {}),
            log,
          };
          try {
            await (f.leaderElect ? runCsiSidecarWithLeaderElection(options) : runCsiSidecar(options));
          } catch (e) {
            if (!signal.aborted) throw new CliError(`csi-sidecar: ${e instanceof Error ? e.message : String(e)}`);
          }
        });
      } finally {
        csi.close();
        client.close();
      }
    });
}
