/**
 * Images given to the node offline: `docker save` / OCI archives imported into containerd's
 * `k8s.io` namespace (the one its CRI plugin serves), unpacked for its snapshotter, as k3s does
 * with `<data-dir>/agent/images/`. containerd's own `ctr` does the import: it ships with
 * containerd, so whatever can run the embedded runtime can import.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { InvalidError, UnavailableError } from '../../util/errors.js';
import type { Logger } from '../../util/log.js';
import { sandboxImageArchive } from './pause/image.js';

const run = promisify(execFile);
/** containerd's CRI plugin keeps Kubernetes' images in this namespace. */
const CRI_NAMESPACE = 'k8s.io';
const IMPORT_TIMEOUT_MS = 10 * 60_000; // an archive of a few GB on a slow disk
/** What `<data-dir>/agent/images/` may hold (ctr detects the compression itself). */
const ARCHIVE_SUFFIXES = ['.tar', '.tar.gz', '.tgz', '.tar.zst', '.tzst'];

/** The containerd socket path of a CRI endpoint (`unix://` optional). */
export function socketOf(endpoint: string): string {
  return endpoint.startsWith('unix://') ? endpoint.slice('unix://'.length) : endpoint;
}

/** Imports one archive; resolves with the image names ctr reports. */
export async function importImageArchive(o: { socket: string; file: string }): Promise<string[]> {
  if (!existsSync(o.file)) throw new InvalidError(`image archive ${o.file} does not exist`);
  try {
    const { stdout } = await run(
      'ctr',
      ['--address', o.socket, '--namespace', CRI_NAMESPACE, 'images', 'import', o.file],
      { timeout: IMPORT_TIMEOUT_MS, maxBuffer: 16 << 20 },
    );
    // ctr prints "unpacking <name> (sha256:…)...done" per image.
    return [...stdout.matchAll(/unpacking (\S+) \(/g)].map((m) => m[1] ?? '').filter((n) => n !== '');
  } catch (e) {
    const err = e as { code?: string; stderr?: string; message?: string };
    if (err.code === 'ENOENT') throw new UnavailableError('cannot import images: ctr (from containerd) not on PATH');
    throw new InvalidError(`importing ${o.file}: ${(err.stderr ?? err.message ?? String(e)).trim()}`);
  }
}

/** The archives of an images directory, by name (a missing directory has none). */
export function archivesIn(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isFile() && ARCHIVE_SUFFIXES.some((s) => d.name.endsWith(s)))
    .map((d) => join(dir, d.name))
    .sort();
}

/**
 * At the runtime's start: the shipped sandbox image, then every archive of `imagesDir`. A failed
 * archive is a warning naming it; the others are still imported.
 */
export async function importStartupImages(o: {
  socket: string;
  /** Where the shipped sandbox archive is written before its import. */
  workDir: string;
  imagesDir: string;
  shipSandbox: boolean;
  log: Logger;
}): Promise<void> {
  const files: string[] = [];
  if (o.shipSandbox) {
    const file = join(o.workDir, 'stowage-pause.tar');
    writeFileSync(file, sandboxImageArchive());
    files.push(file);
  }
  files.push(...archivesIn(o.imagesDir));
  for (const file of files) {
    try {
      const images = await importImageArchive({ socket: o.socket, file });
      o.log.info('imported images', { file, images: images.join(',') });
    } catch (e) {
      o.log.warn('could not import an image archive', { file, error: e instanceof Error ? e.message : String(e) });
    }
  }
}
