import type { Command } from 'commander';
import { isDNS1123Subdomain } from '../api/resources/names.js';
import { kubeconfigYaml } from '../api/tls.js';
import { parseServerList } from '../client/balancer.js';
import { loadKubeconfig } from '../client/kubeconfig.js';
import { RestClient } from '../client/rest.js';
import { nodeUserName } from '../api/nodeauthz/identity.js';
import { ensureNodeToken } from './nodetoken.js';
import type { RestConfig } from '../client/rest.js';
import { CliError } from './errors.js';

/** The kubeconfig at `path`, or a one-line CliError naming it. */
export async function loadKubeconfigOrFail(path: string): Promise<RestConfig> {
  try {
    return await loadKubeconfig(path);
  } catch (e) {
    throw new CliError(`cannot load kubeconfig ${path}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

const collect = (v: string, prev: string[]): string[] => [...prev, v];

/**
 * `--server URL`, repeated or comma-separated: further API servers of the same cluster (same CA
 * and credentials as the kubeconfig). Requests go to the kubeconfig's server first and fail over
 * to these in order when it cannot be reached (client-side balancer, as the k3s agent's).
 */
export function addServerFlag(cmd: Command): Command {
  return cmd.option(
    '--server <url>',
    "another API server to fail over to when the kubeconfig's cannot be reached (repeatable, or comma-separated; same CA and credentials)",
    collect,
    [],
  );
}

/** The kubeconfig at `path` with the `--server` list as its failover servers. */
export async function loadKubeconfigWithServers(path: string, servers: readonly string[] = []): Promise<RestConfig> {
  const cfg = await loadKubeconfigOrFail(path);
  const extra = parseServerList(servers);
  for (const s of extra) {
    let u: URL | undefined;
    try {
      u = new URL(s);
    } catch {
      u = undefined;
    }
    if (!u || (u.protocol !== 'https:' && u.protocol !== 'http:'))
      throw new CliError(`invalid --server ${JSON.stringify(s)}: must be an https:// URL`);
  }
  return extra.length ? { ...cfg, servers: extra } : cfg;
}

/** `stowage kubeconfig node <name>`: a kubeconfig whose credential is that node's own. */
export function kubeconfigCommand(program: Command): void {
  const cmd = program.command('kubeconfig').description('print kubeconfigs for other identities');
  cmd
    .command('node <name>')
    .description(
      "print a kubeconfig with node <name>'s own credential (system:node:<name>), made with the admin kubeconfig",
    )
    .requiredOption('--kubeconfig <path>', 'an admin kubeconfig (creates the node token Secret in kube-system)')
    .action(async (name: string, f: { kubeconfig: string }) => {
      const bad = isDNS1123Subdomain(name);
      if (bad.length) throw new CliError(`invalid node name ${JSON.stringify(name)}: ${bad.join('; ')}`);
      const admin = await loadKubeconfigOrFail(f.kubeconfig);
      if (!admin.caPem) throw new CliError(`kubeconfig ${f.kubeconfig} has no certificate authority to pass on`);
      const client = new RestClient({ ...admin, userAgent: 'stowage-kubeconfig' });
      try {
        const token = await ensureNodeToken(client, name);
        process.stdout.write(
          kubeconfigYaml({ server: admin.server, caCertPem: admin.caPem, token, user: nodeUserName(name) }),
        );
      } finally {
        client.close();
      }
    });
}
