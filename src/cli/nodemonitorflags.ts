/** The node lifecycle controller's flags, as kube-controller-manager's; one definition for `controllers` and `up`. */
import { Option, type Command } from 'commander';
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

/** A duration flag whose help shows its default as a duration (`40s`), not milliseconds. */
function durationOption(flags: string, description: string, defaultMs: number): Option {
  return new Option(flags, description).argParser(parsePositiveDuration).default(defaultMs, `${defaultMs / 1000}s`);
}

export function addNodeMonitorFlags(cmd: Command): Command {
  return cmd
    .addOption(durationOption('--node-monitor-grace-period <duration>', "silence after which a node's Ready condition becomes Unknown", DEFAULT_NODE_MONITOR_GRACE_MS))
    .addOption(durationOption('--node-monitor-period <duration>', 'how often the node lifecycle controller checks every node', DEFAULT_NODE_MONITOR_PERIOD_MS));
}

export function nodeMonitorOptions(f: NodeMonitorFlags): NodeMonitorOptions {
  return { nodeMonitorGracePeriodMs: f.nodeMonitorGracePeriod, nodeMonitorPeriodMs: f.nodeMonitorPeriod };
}
