/** `stowage node`: the node agent as its own process. */
import { hostname } from 'node:os';
import type { Command } from 'commander';
import { loadKubeconfig } from '../client/kubeconfig.js';
import { RestClient } from '../client/rest.js';
import { runNodeAgent } from '../node/agent.js';
import { DEFAULT_BACKOFF } from '../util/backoff.js';
import { newLogger } from '../util/log.js';
import { parseDuration, parsePositiveDuration, positiveInt } from './flags.js';
import { LEASE_DURATION_SECONDS } from '../node/nodestatus/node-object.js';
import { DEFAULT_STATUS_CHECK_MS } from '../node/nodestatus/node-status.js';
import { runUntilSignalled } from './signals.js';

export const DEFAULT_NODE_ROOT_DIR = '/var/lib/stowage/node';

interface NodeFlags {
  readonly kubeconfig: string;
  readonly nodeName: string;
  readonly rootDir: string;
  readonly backoffCap: number;
  readonly containerRuntimeEndpoint?: string;
  readonly nodeLeaseDurationSeconds: number;
  readonly nodeStatusUpdateFrequency: number;
}

export function nodeCommand(program: Command): Command {
  return program
    .command('node')
    .description('run the node agent: the Node object, its lease, and the CSI plugin manager')
    .requiredOption('--kubeconfig <path>', "kubeconfig with the node's credentials")
    .option('--node-name <name>', 'name of this node (default: the host name, lower-cased as the kubelet does)', hostname().toLowerCase())
    .option('--root-dir <dir>', 'root of plugins_registry/, plugins/ and pods/', DEFAULT_NODE_ROOT_DIR)
    .option('--backoff-cap <duration>', 'cap of the per-plugin registration retry backoff', parseDuration, DEFAULT_BACKOFF.capMs)
    .option('--container-runtime-endpoint <endpoint>', "the CRI runtime's socket, e.g. unix:///run/containerd/containerd.sock (default: none; pods get volumes but no containers)")
    .option('--node-lease-duration-seconds <n>', "the node Lease's duration; renewed every quarter of it", positiveInt, LEASE_DURATION_SECONDS)
    .option('--node-status-update-frequency <duration>', 'how often the Node is read back and its status corrected', parsePositiveDuration, DEFAULT_STATUS_CHECK_MS)
    .action(async (f: NodeFlags) => {
      const client = new RestClient({ ...(await loadKubeconfig(f.kubeconfig)), userAgent: 'stowage-node' });
      try {
        await runUntilSignalled((signal) =>
          runNodeAgent({
            client,
            nodeName: f.nodeName,
            rootDir: f.rootDir,
            backoffCapMs: f.backoffCap,
            signal,
            log: newLogger('node'),
            containerRuntimeEndpoint: f.containerRuntimeEndpoint,
            leaseDurationSeconds: f.nodeLeaseDurationSeconds,
            statusCheckMs: f.nodeStatusUpdateFrequency,
          }),
        );
      } finally {
        client.close();
      }
    });
}
