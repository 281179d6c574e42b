/**
 * Entry point for the separate-process test in test/pluginmanager-process.test.ts: runs
 * `stowage node|csi-hostpath|csi-registrar ...` through the same commander wiring as the CLI.
 * Usage: node --import <register hooks> test/pluginmanager.child.ts <subcommand> [flags]
 */
import { Command } from 'commander';
import { nodeCommand } from '../src/cli/node.js';
import { registrarCommand } from '../src/cli/csi-registrar.js';
import { hostpathCommand } from '../src/cli/csi-hostpath.js';

const program = new Command().name('stowage');
nodeCommand(program);
registrarCommand(program);
hostpathCommand(program);
await program.parseAsync(process.argv);
