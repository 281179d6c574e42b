/**
 * The node lifecycle controller's flags, as kube-controller-manager's, with its defaults: one
 * definition for `stowage controllers` and `stowage up`. Kube takes any float32 for the eviction
 * rates and threshold; values that make no sense (a negative rate, a fraction above 1) are refused
 * with a one-line error.
 */
import type { Command } from 'commander';
import { DEFAULT_NODE_MONITOR_GRACE_MS, DEFAULT_NODE_MONITOR_PERIOD_MS } from '../controllers/nodelifecycle/decide.js';
import { DEFAULT_EVICTION_LIMITS, type EvictionLimits } from '../controllers/nodelifecycle/zones.js';
import { boundedNumber, durationOption, nonNegativeInt } from './flags.js';

/** What commander parses from addNodeLifecycleFlags (durations in milliseconds). */
export interface NodeLifecycleFlags {
  readonly nodeMonitorGracePeriod: number;
  readonly nodeMonitorPeriod: number;
  readonly nodeEvictionRate: number;
  readonly secondaryNodeEvictionRate: number;
  readonly largeClusterSizeThreshold: number;
  readonly unhealthyZoneThreshold: number;
}

/** What the controller manager takes (runControllers' options). */
export interface NodeLifecycleOptions {
  readonly nodeMonitorGracePeriodMs: number;
  readonly nodeMonitorPeriodMs: number;
  readonly evictionLimits: EvictionLimits;
}

/** A duration flag whose help shows its default as a duration (`40s`), not milliseconds. */
/** kube-controller-manager's zone eviction flags of the node lifecycle controller. */
export function addEvictionLimitFlags(cmd: Command): Command {
  const d = DEFAULT_EVICTION_LIMITS;
  return cmd
    .option(
      '--node-eviction-rate <qps>',
      'nodes per second tainted NoExecute (their pods evicted) in a zone that is healthy',
      boundedNumber('--node-eviction-rate', { min: 0, minExclusive: true }),
      d.nodeEvictionRate,
    )
    .option(
      '--secondary-node-eviction-rate <qps>',
      'nodes per second tainted NoExecute in an unhealthy zone (see --unhealthy-zone-threshold); 0 for a cluster of at most --large-cluster-size-threshold nodes',
      boundedNumber('--secondary-node-eviction-rate', { min: 0 }),
      d.secondaryNodeEvictionRate,
    )
    .option(
      '--large-cluster-size-threshold <n>',
      'number of nodes from which a zone counts as large for --secondary-node-eviction-rate',
      nonNegativeInt('--large-cluster-size-threshold'),
      d.largeClusterSizeThreshold,
    )
    .option(
      '--unhealthy-zone-threshold <fraction>',
      "fraction of a zone's nodes not Ready (at least 3) that makes the zone unhealthy",
      boundedNumber('--unhealthy-zone-threshold', { min: 0, max: 1 }),
      d.unhealthyZoneThreshold,
    );
}

/** The eviction limits from flags added by addEvictionLimitFlags. */
export function evictionLimits(
  f: Pick<
    NodeLifecycleFlags,
    'nodeEvictionRate' | 'secondaryNodeEvictionRate' | 'largeClusterSizeThreshold' | 'unhealthyZoneThreshold'
  >,
): EvictionLimits {
  return {
    nodeEvictionRate: f.nodeEvictionRate,
    secondaryNodeEvictionRate: f.secondaryNodeEvictionRate,
    largeClusterSizeThreshold: f.largeClusterSizeThreshold,
    unhealthyZoneThreshold: f.unhealthyZoneThreshold,
  };
}

/** Every node lifecycle flag: the node monitor's timing and the zone eviction limits. */
export function addNodeLifecycleFlags(cmd: Command): Command {
  return addEvictionLimitFlags(
    cmd
      .addOption(
        durationOption(
          '--node-monitor-grace-period <duration>',
          "silence after which a node's Ready condition becomes Unknown",
          DEFAULT_NODE_MONITOR_GRACE_MS,
        ),
      )
      .addOption(
        durationOption(
          '--node-monitor-period <duration>',
          'how often the node lifecycle controller checks every node',
          DEFAULT_NODE_MONITOR_PERIOD_MS,
        ),
      ),
  );
}

export function nodeLifecycleOptions(f: NodeLifecycleFlags): NodeLifecycleOptions {
  return {
    nodeMonitorGracePeriodMs: f.nodeMonitorGracePeriod,
    nodeMonitorPeriodMs: f.nodeMonitorPeriod,
    evictionLimits: evictionLimits(f),
  };
}
