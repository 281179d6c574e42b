import { Command } from 'commander';

const program = new Command();
program.name('stowage').description('The Kubernetes storage control plane as one program');

await program.parseAsync(process.argv);
