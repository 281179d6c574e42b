/**
 * Entry point for the separate-process part of test/csi-registration.test.ts: runs
 * `stowage csi-registrar ...` through the same commander wiring the CLI uses.
 * Usage: node --import <register hooks> test/csi-registration.child.ts csi-registrar --csi-address ...
 */
import { Command } from 'commander';
import { registrarCommand } from '../src/csi/registrar/command.js';

const program = new Command().name('stowage');
registrarCommand(program);
await program.parseAsync(process.argv);
