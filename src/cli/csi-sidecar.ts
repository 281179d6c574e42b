/** `stowage csi-sidecar`: the CSI controller sidecar as its own process. */
import { COMPONENTS, componentUserAgent } from '../kube/version.js';
import type { Command } from 'commander';
import { LeaderElectionLostError, RestClient } from '../client/index.js';
import { CsiClient } from '../csi/client.js';
import { runCsiSidecar, runCsiSidecarWithLeaderElection } from '../csi/sidecar/sidecar.js';
import { newLogger } from '../util/log.js';
import { CliError } from './errors.js';
import { durationOption, positiveInt } from './flags.js';
import { addServerFlag, loadKubeconfigWithServers } from './kubeconfig.js';
import { addLeaderElectionTimingFlags, leaderElectionConfig } from './leaderflags.js';
import { runUntilSignalled } from './signals.js';

interface SidecarFlags {
  readonly csiAddress: string;
  readonly kubeconfig: string;
  readonly server: string[];
  readonly leaderElection: boolean;
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
  readonly [flag: string]: unknown;
}

/** Adds `stowage csi-sidecar --csi-address … --kubeconfig … [--leader-election]`. Runs until SIGINT/SIGTERM. */
export function sidecarCommand(program: Command): Command {
  const cmd = program
    .command('csi-sidecar')
    .description('run the CSI controller sidecar (provisioner, attacher, resizer) next to a CSI driver')
    .requiredOption('--csi-address <unix:///path>', "the driver's controller endpoint")
    .requiredOption('--kubeconfig <path>', "kubeconfig with the sidecar's credentials")
    .option(
      '--leader-election',
      'hold a per-driver Lease so that only one replica is active; exit when it is lost',
      false,
    )
    .option('--leader-elect', 'the same as --leader-election', false)
    .option('--workers <n>', 'workers per queue', positiveInt, 4)
    .addOption(durationOption('--timeout <duration>', 'timeout of each CSI call', 15_000))
    .option(
      '--extra-create-metadata',
      'pass csi.storage.k8s.io/pvc/name, pvc/namespace and pv/name to CreateVolume',
      false,
    )
    .option('--enable-capacity', 'publish CSIStorageCapacity objects from GetCapacity', false)
    .option('--capacity-namespace <ns>', 'namespace of the CSIStorageCapacity objects', 'kube-system')
    .addOption(durationOption('--capacity-poll-interval <duration>', 'how often GetCapacity is polled', 60_000))
    .option('--capacity-for-immediate-binding', 'track Immediate classes too', false)
    .option('--no-provisioner', 'do not provision or delete volumes')
    .option('--no-attacher', 'do not attach or detach volumes')
    .option('--no-resizer', 'do not expand volumes');
  addServerFlag(cmd);
  return addLeaderElectionTimingFlags(cmd, 'leader-election').action(async (f: SidecarFlags) => {
    const election = f.leaderElection || f.leaderElect ? leaderElectionConfig(f, 'leader-election') : undefined;
    // Its Lease is external-provisioner's; the attacher and resizer write with their own user agents.
    const cfg = {
      ...(await loadKubeconfigWithServers(f.kubeconfig, f.server)),
      userAgent: componentUserAgent(COMPONENTS.provisioner),
    };
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
          ...(f.enableCapacity
            ? {
                capacity: {
                  namespace: f.capacityNamespace,
                  pollMs: f.capacityPollInterval,
                  immediateToo: f.capacityForImmediateBinding,
                },
              }
            : {}),
          log,
        };
        try {
          await (election ? runCsiSidecarWithLeaderElection({ ...options, election }) : runCsiSidecar(options));
        } catch (e) {
          if (e instanceof LeaderElectionLostError) throw new CliError(e.message);
          if (!signal.aborted) throw new CliError(`csi-sidecar: ${e instanceof Error ? e.message : String(e)}`);
        }
      });
    } finally {
      csi.close();
      client.close();
    }
  });
}
