/**
 * `stowage images import FILE…`: `docker save` or OCI archives into the node's container runtime
 * (the embedded containerd of `stowage up --data-dir DIR`, or a given endpoint), for machines
 * with no registry. Archives left in `<data-dir>/agent/images/` are imported at every start.
 */
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { importImageArchive, socketOf } from '../node/runtime/image-import.js';
import { CliError } from './errors.js';

/** k3s' directory of image archives imported when the runtime starts. */
export function agentImagesDir(dataDir: string): string {
  return join(dataDir, 'agent', 'images');
}

interface ImportFlags {
  readonly dataDir: string;
  readonly containerRuntimeEndpoint?: string;
}

export function imagesCommand(program: Command): void {
  const cmd = program.command('images').description("manage the images of the node's container runtime");
  cmd
    .command('import <files...>')
    .description("import image archives (docker save or OCI) into the node's container runtime")
    .option(
      '--data-dir <dir>',
      'the data dir of the running `stowage up` whose embedded containerd gets them',
      './stowage-data',
    )
    .option('--container-runtime-endpoint <endpoint>', 'a containerd CRI socket instead of the embedded one')
    .action(async (files: string[], f: ImportFlags) => {
      const socket = socketOf(f.containerRuntimeEndpoint ?? join(resolve(f.dataDir), 'containerd', 'containerd.sock'));
      for (const file of files) {
        try {
          const images = await importImageArchive({ socket, file: resolve(file) });
          process.stdout.write(`${file}: ${images.length > 0 ? images.join(' ') : 'imported'}\n`);
        } catch (e) {
          throw new CliError(e instanceof Error ? e.message : String(e));
        }
      }
    });
}
