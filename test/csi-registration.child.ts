/**
 * Entry point for the separate-process part of test/csi-registration.test.ts: runs
 * `stowage csi-registrar ...` or `stowage csi-hostpath ...` through the same commander wiring
 * the CLI uses.
 * Usage: node --import <register hooks> test/csi-registration.child.ts <subcommand> [flags]
 */
import { Command } from 'commander';
import { registrarCommand } from '../src/cli/csi-registrar.js';
import { hostpathCommand } from '../src/cli/csi-hostpath.js';

const program = new Command().name('stowage');
registrarCommand(program);
hostpathCommand(program);
await program.parseAsync(process.argv);
