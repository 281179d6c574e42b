/**
 * Entry point for test/csi-sidecar-process.test.ts: runs `stowage csi-sidecar ...` or
 * `stowage csi-hostpath ...` through the same commander wiring the CLI uses.
 * Usage: node --import <register hooks> test/csi-sidecar.child.ts <subcommand> [flags]
 */
import { Command } from 'commander';
import { hostpathCommand } from '../src/cli/csi-hostpath.js';
import { sidecarCommand } from '../src/cli/csi-sidecar.js';

const program = new Command().name('stowage');
sidecarCommand(program);
hostpathCommand(program);
await program.parseAsync(process.argv);
