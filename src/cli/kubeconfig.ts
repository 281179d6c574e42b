import type { Command } from 'commander';
import { isDNS1123Subdomain } from '../api/resources/names.js';
import { kubeconfigYaml } from '../api/tls.js';
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
