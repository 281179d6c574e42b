/** `stowage node`: the node agent as its own process. */
import { hostname } from 'node:os';
import { Command } from 'commander';
import { loadKubeconfig } from '../client/kubeconfig.js';
import { RestClient } from '../client/rest.js';
import { parseDuration } from '../cli/flags.js';
import { DEFAULT_BACKOFF } from '../util/backoff.js';
import { newLogger } from '../util/log.js';
import { startNodeAgent } from './agent.js';

export const DEFAULT_ROOT_DIR = '/var/lib/stowage/node';

export function nodeCommand(program: Command): Command {
  return program
    .command('node')
    .description('run the node agent: the Node object, its lease, and the CSI plugin manager')
    .requiredOption('--kubeconfig <path>', 'kubeconfig with the node\'s credentials')
    .option('--node-name <name>', 'name of this node (default: the host name, lower-cased as the kubelet does)', hostname().toLowerCase())
    .option('--root-dir <dir>', 'root of plugins_registry/, plugins/ and pods/', DEFAULT_ROOT_DIR)
    .option('--backoff-cap <duration>', 'cap of the per-plugin registration retry backoff', parseDuration, DEFAULT_BACKOFF.capMs)
    .option('--container-runtime-endpoint <endpoint>', 'the CRI runtime\'s socket, e.g. unix:///run/containerd/containerd.sock (default: none; pods get volumes but no containers)')
    .action(async (opts: { kubeconfig: string; nodeName: string; rootDir: string; backoffCap: number; containerRuntimeEndpoint?: string }) => {
      const log = newLogger('node');
      const client = new RestClient({ ...(await loadKubeconfig(opts.kubeconfig)), userAgent: 'stowage-node' });
      const ac = new AbortController();
      const onSignal = (sig: NodeJS.Signals): void => ac.abort(new Error(`received ${sig}`));
      process.once('SIGTERM', onSignal);
      process.once('SIGINT', onSignal);
      try {
        const agent = await startNodeAgent({
          client,
          nodeName: opts.nodeName,
          rootDir: opts.rootDir,
          backoffCapMs: opts.backoffCap,
          signal: ac.signal,
          log,
          containerRuntimeEndpoint: opts.containerRuntimeEndpoint,
        });
        await new Promise<void>((resolve) => {
          if (ac.signal.aborted) resolve();
          else ac.signal.addEventListener('abort', () => resolve(), { once: true });
        });
        await agent.stop();
      } finally {
        process.off('SIGTERM', onSignal);
        process.off('SIGINT', onSignal);
        client.close();
      }
    });
}
