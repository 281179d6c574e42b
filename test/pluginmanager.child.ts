/**
 * Entry point for the separate-process test in test/pluginmanager-process.test.ts: runs
 * `stowage node|csi-hostpath|csi-registrar ...` through the same commander wiring as the CLI.
 * Usage: node --import <register hooks> test/pluginmanager.child.ts <subcommand> [flags]
 */
import { Command } from 'commander';
import { nodeCommand } from '../src/node/command.js';
import { registrarCommand } from '../src/csi/registrar/command.js';
import { hostpathCommand } from '../src/csi/hostpath/index.js';

const program = new Command().name('stowage');
nodeCommand(program);
registrarCommand(program);
hostpathCommand(program);
await program.parseAsync(process.argv);
