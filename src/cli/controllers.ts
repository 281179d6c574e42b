/** `stowage controllers --kubeconfig …`: the controller manager as its own process. */
import type { Command } from 'commander';
import { RestClient } from '../client/index.js';
import { runControllers, runControllersWithLeaderElection } from '../controllers/manager.js';
import { DEFAULT_NODE_MONITOR_GRACE_MS, DEFAULT_NODE_MONITOR_PERIOD_MS } from '../controllers/nodelifecycle/decide.js';
import { CliError } from './errors.js';
import { parsePositiveDuration } from './flags.js';
import { loadKubeconfigOrFail } from './kubeconfig.js';
import { runUntilSignalled } from './signals.js';

interface ControllersFlags {
  readonly kubeconfig: string;
  readonly leaderElect: boolean;
  readonly workers: string;
  readonly nodeMonitorGracePeriod: number;
  readonly nodeMonitorPeriod: number;
}

export function controllersCommand(program: Command): Command {
  return program
    .command('controllers')
    .description('run the controllers (PV binder, protection, attach/detach, namespace, garbage collector, ephemeral volume, node lifecycle, volume-aware scheduler) against an API server')
    .requiredOption('--kubeconfig <path>', "kubeconfig with the controllers' credentials")
    .option('--leader-elect', 'hold a Lease so that only one controllers process is active', false)
    .option('--workers <n>', 'workers per controller queue', '4')
    .option('--node-monitor-grace-period <duration>', "silence after which a node's Ready condition becomes Unknown", parsePositiveDuration, DEFAULT_NODE_MONITOR_GRACE_MS)
    .option('--node-monitor-period <duration>', 'how often the node lifecycle controller checks every node', parsePositiveDuration, DEFAULT_NODE_MONITOR_PERIOD_MS)
    .action(async (f: ControllersFlags) => {
      const workers = Number(f.workers);
      if (!Number.isInteger(workers) || workers < 1) throw new CliError(`invalid --workers ${JSON.stringify(f.workers)}: must be a positive integer`);
      const client = new RestClient(await loadKubeconfigOrFail(f.kubeconfig));
      const run = f.leaderElect ? runControllersWithLeaderElection : runControllers;
      try {
        await runUntilSignalled((signal) => run({ client, signal, workers, nodeMonitorGracePeriodMs: f.nodeMonitorGracePeriod, nodeMonitorPeriodMs: f.nodeMonitorPeriod }));
      } finally {
        client.close();
      }
    });
}
