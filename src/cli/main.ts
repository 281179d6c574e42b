import { Command, CommanderError } from 'commander';
import { controllersCommand } from './controllers.js';
import { hostpathCommand } from './csi-hostpath.js';
import { registrarCommand } from './csi-registrar.js';
import { sidecarCommand } from './csi-sidecar.js';
import { imagesCommand } from './images.js';
import { kubeconfigCommand } from './kubeconfig.js';
import { nodeCommand } from './node.js';
import { CliError } from './errors.js';
import { serverCommand } from './server.js';
import { upCommand } from './up.js';
import { whyCommand } from './why.js';

const program = new Command();
program.name('stowage').description('The Kubernetes storage control plane as one program').exitOverride();
upCommand(program);
serverCommand(program);
controllersCommand(program);
hostpathCommand(program);
registrarCommand(program);
sidecarCommand(program);
nodeCommand(program);
kubeconfigCommand(program);
imagesCommand(program);
whyCommand(program);

try {
  await program.parseAsync(process.argv);
} catch (e) {
  if (e instanceof CommanderError) process.exit(e.exitCode);
  const msg = e instanceof CliError ? e.message : e instanceof Error ? e.message : String(e);
  process.stderr.write(`stowage: ${msg}\n`);
  process.exit(e instanceof CliError ? e.exitCode : 1);
}
