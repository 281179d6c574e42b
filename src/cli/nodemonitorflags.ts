/** The node lifecycle controller's flags, as kube-controller-manager's; one definition for `controllers` and `up`. */
import type { Command } from 'commander';
import { DEFAULT_NODE_MONITOR_GRACE_MS, DEFAULT_NODE_MONITOR_PERIOD_MS } from '../controllers/nodelifecycle/decide.js';
import { parsePositiveDuration } from './flags.js';

export interface NodeMonitorFlags {
  /** Milliseconds (parsed by commander). */
  readonly nodeMonitorGracePeriod: number;
  readonly nodeMonitorPeriod: number;
}

/** What the controller manager takes (runControllers' options). */
export interface NodeMonitorOptions {
  readonly nodeMonitorGracePeriodMs: number;
  readonly nodeMonitorPeriodMs: number;
}

export function addNodeMonitorFlags(cmd: Command): Command {
  return cmd
    .option('--node-monitor-grace-period <duration>', "silence after which a node's Ready condition becomes Unknown", parsePositiveDuration, DEFAULT_NODE_MONITOR_GRACE_MS)
    .option('--node-monitor-period <duration>', 'how often the node lifecycle controller checks every node', parsePositiveDuration, DEFAULT_NODE_MONITOR_PERIOD_MS);
}

export function nodeMonitorOptions(f: NodeMonitorFlags): NodeMonitorOptions {
  return { nodeMonitorGracePeriodMs: f.nodeMonitorGracePeriod, nodeMonitorPeriodMs: f.nodeMonitorPeriod };
}
