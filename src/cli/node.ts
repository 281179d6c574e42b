/** `stowage node`: the node agent as its own process. */
import { COMPONENTS, componentUserAgent } from '../kube/version.js';
import { hostname } from 'node:os';
import type { Command } from 'commander';
import { addServerFlag, loadKubeconfigWithServers } from './kubeconfig.js';
import { RestClient } from '../client/rest.js';
import { runNodeAgent } from '../node/agent.js';
import { DEFAULT_BACKOFF } from '../util/backoff.js';
import { newLogger } from '../util/log.js';
import { readFile } from 'node:fs/promises';
import { CliError } from './errors.js';
import { DEFAULT_NODE_PORT } from '../node/server/server.js';
import { durationOption, parseDuration, positiveInt } from './flags.js';
import { addContainerLogFlags, containerLogPolicy, type ContainerLogFlags } from './logflags.js';
import { LEASE_DURATION_SECONDS } from '../node/nodestatus/node-object.js';
import { DEFAULT_STATUS_CHECK_MS } from '../node/nodestatus/node-status.js';
import { runUntilSignalled } from './signals.js';

export const DEFAULT_NODE_ROOT_DIR = '/var/lib/stowage/node';

interface NodeFlags extends ContainerLogFlags {
  readonly kubeconfig: string;
  readonly server: string[];
  readonly nodeName: string;
  readonly rootDir: string;
  readonly backoffCap: number;
  readonly containerRuntimeEndpoint?: string;
  readonly address: string;
  readonly port: string;
  readonly clientCaFile?: string;
  readonly nodeLeaseDurationSeconds: number;
  readonly nodeStatusUpdateFrequency: number;
}

export function nodeCommand(program: Command): Command {
  const cmd = program.command('node');
  addContainerLogFlags(cmd);
  addServerFlag(cmd);
  return cmd
    .description('run the node agent: the Node object, its lease, and the CSI plugin manager')
    .requiredOption('--kubeconfig <path>', "kubeconfig with the node's credentials")
    .option(
      '--node-name <name>',
      'name of this node (default: the host name, lower-cased as the kubelet does)',
      hostname().toLowerCase(),
    )
    .option('--root-dir <dir>', 'root of plugins_registry/, plugins/ and pods/', DEFAULT_NODE_ROOT_DIR)
    .addOption(
      durationOption(
        '--backoff-cap <duration>',
        'cap of the per-plugin registration retry backoff',
        DEFAULT_BACKOFF.capMs,
        parseDuration,
      ),
    )
    .option(
      '--container-runtime-endpoint <endpoint>',
      "the CRI runtime's socket, e.g. unix:///run/containerd/containerd.sock (default: none; pods get volumes but no containers)",
    )
    .option('--address <ip>', "the IP address the node's HTTPS endpoint (logs, exec) listens on", '0.0.0.0')
    .option('--port <port>', "port of the node's HTTPS endpoint (0 = any free port)", String(DEFAULT_NODE_PORT))
    .option(
      '--client-ca-file <path>',
      "CA bundle the API server's client certificate must chain to (default: the kubeconfig's CA)",
    )
    .option(
      '--node-lease-duration-seconds <n>',
      "the node Lease's duration; renewed every quarter of it",
      positiveInt,
      LEASE_DURATION_SECONDS,
    )
    .addOption(
      durationOption(
        '--node-status-update-frequency <duration>',
        'how often the Node is read back and its status corrected',
        DEFAULT_STATUS_CHECK_MS,
      ),
    )
    .action(async (f: NodeFlags) => {
      const port = Number(f.port);
      if (!Number.isInteger(port) || port < 0 || port > 65535)
        throw new CliError(`invalid --port ${JSON.stringify(f.port)}: must be 0-65535`);
      const config = await loadKubeconfigWithServers(f.kubeconfig, f.server);
      const clientCaPem =
        f.clientCaFile !== undefined
          ? await readFile(f.clientCaFile, 'utf8').catch((e: NodeJS.ErrnoException) => {
              throw new CliError(`cannot read --client-ca-file ${f.clientCaFile}: ${e.code ?? e.message}`);
            })
          : config.caPem;
      if (!clientCaPem)
        throw new CliError(
          'the node endpoint needs a CA to authenticate the API server: give --client-ca-file or a kubeconfig with certificate-authority data',
        );
      const client = new RestClient({ ...config, userAgent: componentUserAgent(COMPONENTS.kubelet) });
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
            server: { address: f.address, port, clientCaPem },
            leaseDurationSeconds: f.nodeLeaseDurationSeconds,
            statusCheckMs: f.nodeStatusUpdateFrequency,
            containerLogs: containerLogPolicy(f),
          }),
        );
      } finally {
        client.close();
      }
    });
}
