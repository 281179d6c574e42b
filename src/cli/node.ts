/** `stowage node`: the node agent as its own process. */
import { hostname } from 'node:os';
import type { Command } from 'commander';
import { loadKubeconfig } from '../client/kubeconfig.js';
import { RestClient } from '../client/rest.js';
import { runNodeAgent } from '../node/agent.js';
import { DEFAULT_BACKOFF } from '../util/backoff.js';
import { newLogger } from '../util/log.js';
import { parseDuration } from './flags.js';
import { runUntilSignalled } from './signals.js';

export const DEFAULT_NODE_ROOT_DIR = '/var/lib/stowage/node';

interface NodeFlags {
  readonly kubeconfig: string;
  readonly nodeName: string;
  readonly rootDir: string;
  readonly backoffCap: number;
}

export function nodeCommand(program: Command): Command {
  return program
    .command('node')
    .description('run the node agent: the Node object, its lease, and the CSI plugin manager')
    .requiredOption('--kubeconfig <path>', "kubeconfig with the node's credentials")
    .option('--node-name <name>', 'name of this node (default: the host name, lower-cased as the kubelet does)', hostname().toLowerCase())
    .option('--root-dir <dir>', 'root of plugins_registry/, plugins/ and pods/', DEFAULT_NODE_ROOT_DIR)
    .option('--backoff-cap <duration>', 'cap of the per-plugin registration retry backoff', parseDuration, DEFAULT_BACKOFF.capMs)
    .action(async (f: NodeFlags) => {
      const client = new RestClient({ ...(await loadKubeconfig(f.kubeconfig)), userAgent: 'stowage-node' });
      try {
        await runUntilSignalled((signal) =>
          runNodeAgent({ client, nodeName: f.nodeName, rootDir: f.rootDir, backoffCapMs: f.backoffCap, signal, log: newLogger('node') }),
        );
      } finally {
        client.close();
      }
    });
}
