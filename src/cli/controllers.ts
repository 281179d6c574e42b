/** `stowage controllers --kubeconfig …`: the controller manager as its own process. */
import { COMPONENTS, componentUserAgent } from '../kube/version.js';
import type { Command } from 'commander';
import { LeaderElectionLostError, RestClient } from '../client/index.js';
import { CONTROLLERS_LEASE, runControllers, runControllersWithLeaderElection } from '../controllers/manager.js';
import { CliError } from './errors.js';
import { addServerFlag, loadKubeconfigWithServers } from './kubeconfig.js';
import { addLeaderElectionTimingFlags, leaderElectionConfig } from './leaderflags.js';
import { runUntilSignalled } from './signals.js';
import { addNodeLifecycleFlags, nodeLifecycleOptions, type NodeLifecycleFlags } from './nodelifecycleflags.js';

interface ControllersFlags extends NodeLifecycleFlags {
  readonly kubeconfig: string;
  readonly server: string[];
  readonly leaderElect: boolean;
  readonly workers: string;
  readonly [flag: string]: unknown;
}

export function controllersCommand(program: Command): Command {
  const cmd = addNodeLifecycleFlags(
    addServerFlag(
      program
        .command('controllers')
        .description(
          'run the controllers (PV binder, protection, attach/detach, namespace, garbage collector, ephemeral volume, workloads, node lifecycle, volume-aware scheduler) against an API server',
        )
        .requiredOption('--kubeconfig <path>', "kubeconfig with the controllers' credentials")
        .option(
          '--leader-elect',
          'hold a Lease so that only one controllers process is active; exit when it is lost',
          false,
        )
        .option('--workers <n>', 'workers per controller queue', '4'),
    ),
  );
  return addLeaderElectionTimingFlags(cmd, 'leader-elect', CONTROLLERS_LEASE).action(async (f: ControllersFlags) => {
    const workers = Number(f.workers);
    if (!Number.isInteger(workers) || workers < 1)
      throw new CliError(`invalid --workers ${JSON.stringify(f.workers)}: must be a positive integer`);
    const election = f.leaderElect ? leaderElectionConfig(f, 'leader-elect') : undefined;
    const client = new RestClient({
      ...(await loadKubeconfigWithServers(f.kubeconfig, f.server)),
      userAgent: componentUserAgent(COMPONENTS.controllerManager),
    });
    try {
      const nodeLifecycle = nodeLifecycleOptions(f);
      await runUntilSignalled((signal) =>
        election
          ? runControllersWithLeaderElection({ client, signal, workers, election, ...nodeLifecycle })
          : runControllers({ client, signal, workers, ...nodeLifecycle }),
      );
    } catch (e) {
      if (e instanceof LeaderElectionLostError) throw new CliError(e.message);
      throw e;
    } finally {
      client.close();
    }
  });
}
