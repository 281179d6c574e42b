/** `stowage controllers --kubeconfig …`: the controller manager as its own process. */
import type { Command } from 'commander';
import { LeaderElectionLostError, RestClient } from '../client/index.js';
import { CONTROLLERS_LEASE, runControllers, runControllersWithLeaderElection } from '../controllers/manager.js';
import { DEFAULT_NODE_MONITOR_GRACE_MS, DEFAULT_NODE_MONITOR_PERIOD_MS } from '../controllers/nodelifecycle/decide.js';
import { DEFAULT_EVICTION_LIMITS, type EvictionLimits } from '../controllers/nodelifecycle/zones.js';
import { CliError } from './errors.js';
import { boundedNumber, nonNegativeInt, parsePositiveDuration } from './flags.js';
import { loadKubeconfigOrFail } from './kubeconfig.js';
import { addLeaderElectionTimingFlags, leaderElectionConfig } from './leaderflags.js';
import { runUntilSignalled } from './signals.js';

interface ControllersFlags {
  readonly kubeconfig: string;
  readonly leaderElect: boolean;
  readonly workers: string;
  readonly nodeMonitorGracePeriod: number;
  readonly nodeMonitorPeriod: number;
  readonly nodeEvictionRate: number;
  readonly secondaryNodeEvictionRate: number;
  readonly largeClusterSizeThreshold: number;
  readonly unhealthyZoneThreshold: number;
  readonly [flag: string]: unknown;
}

export function controllersCommand(program: Command): Command {
  const cmd = program
    .command('controllers')
    .description('run the controllers (PV binder, protection, attach/detach, namespace, garbage collector, ephemeral volume, workloads, node lifecycle, volume-aware scheduler) against an API server')
    .requiredOption('--kubeconfig <path>', "kubeconfig with the controllers' credentials")
    .option('--leader-elect', 'hold a Lease so that only one controllers process is active; exit when it is lost', false)
    .option('--workers <n>', 'workers per controller queue', '4')
    .option('--node-monitor-grace-period <duration>', "silence after which a node's Ready condition becomes Unknown", parsePositiveDuration, DEFAULT_NODE_MONITOR_GRACE_MS)
    .option('--node-monitor-period <duration>', 'how often the node lifecycle controller checks every node', parsePositiveDuration, DEFAULT_NODE_MONITOR_PERIOD_MS);
  addEvictionLimitFlags(cmd);
  return addLeaderElectionTimingFlags(cmd, 'leader-elect', CONTROLLERS_LEASE).action(async (f: ControllersFlags) => {
    const workers = Number(f.workers);
    if (!Number.isInteger(workers) || workers < 1) throw new CliError(`invalid --workers ${JSON.stringify(f.workers)}: must be a positive integer`);
    const election = f.leaderElect ? leaderElectionConfig(f, 'leader-elect') : undefined;
    const client = new RestClient({ ...(await loadKubeconfigOrFail(f.kubeconfig)), userAgent: 'stowage-controllers' });
    try {
      const nodeMonitor = { nodeMonitorGracePeriodMs: f.nodeMonitorGracePeriod, nodeMonitorPeriodMs: f.nodeMonitorPeriod, evictionLimits: evictionLimits(f) };
      await runUntilSignalled((signal) => (election ? runControllersWithLeaderElection({ client, signal, workers, election, ...nodeMonitor }) : runControllers({ client, signal, workers, ...nodeMonitor })));
    } catch (e) {
      if (e instanceof LeaderElectionLostError) throw new CliError(e.message);
      throw e;
    } finally {
      client.close();
    }
  });
}

/**
 * kube-controller-manager's zone eviction flags of the node lifecycle controller, with its
 * defaults (`stowage up` takes the same). Kube takes any float32 here; we refuse values that make
 * no sense (a negative rate, a fraction above 1) with a one-line error.
 */
export function addEvictionLimitFlags(cmd: Command): Command {
  const d = DEFAULT_EVICTION_LIMITS;
  return cmd
    .option('--node-eviction-rate <qps>', 'nodes per second tainted NoExecute (their pods evicted) in a zone that is healthy', boundedNumber('--node-eviction-rate', { min: 0, minExclusive: true }), d.nodeEvictionRate)
    .option(
      '--secondary-node-eviction-rate <qps>',
      'nodes per second tainted NoExecute in an unhealthy zone (see --unhealthy-zone-threshold); 0 for a cluster of at most --large-cluster-size-threshold nodes',
      boundedNumber('--secondary-node-eviction-rate', { min: 0 }),
      d.secondaryNodeEvictionRate,
    )
    .option('--large-cluster-size-threshold <n>', 'number of nodes from which a zone counts as large for --secondary-node-eviction-rate', nonNegativeInt('--large-cluster-size-threshold'), d.largeClusterSizeThreshold)
    .option('--unhealthy-zone-threshold <fraction>', 'fraction of a zone\'s nodes not Ready (at least 3) that makes the zone unhealthy', boundedNumber('--unhealthy-zone-threshold', { min: 0, max: 1 }), d.unhealthyZoneThreshold);
}

/** The eviction limits from flags added by addEvictionLimitFlags. */
export function evictionLimits(f: Pick<ControllersFlags, 'nodeEvictionRate' | 'secondaryNodeEvictionRate' | 'largeClusterSizeThreshold' | 'unhealthyZoneThreshold'>): EvictionLimits {
  return { nodeEvictionRate: f.nodeEvictionRate, secondaryNodeEvictionRate: f.secondaryNodeEvictionRate, largeClusterSizeThreshold: f.largeClusterSizeThreshold, unhealthyZoneThreshold: f.unhealthyZoneThreshold };
}
