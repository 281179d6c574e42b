/**
 * The sandbox image Stowage ships: the pause program (./elf.ts) alone in one layer, tagged
 * `SHIPPED_SANDBOX_IMAGE`, the default `--pod-infra-container-image`. Imported into the node's
 * runtime at start, so a pod's sandbox never needs a registry.
 */
import { dockerArchive } from './archive.js';
import { pauseElf } from './elf.js';

/** A `localhost/` name: never an upstream image's name, and never pulled from the internet. */
export const SHIPPED_SANDBOX_IMAGE = 'localhost/stowage/pause:1';

/** The shipped sandbox image as a `docker save` archive. */
export function sandboxImageArchive(): Buffer {
  return dockerArchive({
    ref: SHIPPED_SANDBOX_IMAGE,
    files: [{ path: 'pause', mode: 0o755, data: pauseElf() }],
    entrypoint: ['/pause'],
  });
}
