/**
 * Image archives written from files, with no registry and no tools: a `docker save`-format tar
 * (manifest.json, the config, one layer tar) that `ctr images import` and `docker load` read.
 * The layer's tar is plain ustar with fixed owner and mtime, so the same files make the same
 * image digest on every machine.
 */
import { createHash } from 'node:crypto';

export interface ArchiveFile {
  /** Path inside the archive, no leading slash; a directory ends with `/`. */
  readonly path: string;
  readonly mode: number;
  readonly data?: Buffer;
}

function octal(n: number, width: number): string {
  return `${n.toString(8).padStart(width - 1, '0')}\0`;
}

function header(f: ArchiveFile, size: number): Buffer {
  const h = Buffer.alloc(512);
  if (Buffer.byteLength(f.path) > 100) throw new Error(`archive path too long for ustar: ${f.path}`);
  h.write(f.path, 0, 100, 'utf8');
  h.write(octal(f.mode & 0o7777, 8), 100, 'ascii');
  h.write(octal(0, 8), 108, 'ascii'); // uid
  h.write(octal(0, 8), 116, 'ascii'); // gid
  h.write(octal(size, 12), 124, 'ascii');
  h.write(octal(0, 12), 136, 'ascii'); // mtime: fixed, for a reproducible digest
  h.write('        ', 148, 'ascii'); // checksum placeholder
  h.write(f.path.endsWith('/') ? '5' : '0', 156, 'ascii');
  h.write('ustar\x0000', 257, 'ascii');
  let sum = 0;
  for (const b of h) sum += b;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
  return h;
}

/** A ustar archive of `files`, in order. */
export function tarOf(files: readonly ArchiveFile[]): Buffer {
  const parts: Buffer[] = [];
  for (const f of files) {
    const data = f.path.endsWith('/') ? Buffer.alloc(0) : (f.data ?? Buffer.alloc(0));
    parts.push(header(f, data.length), data, Buffer.alloc((512 - (data.length % 512)) % 512));
  }
  parts.push(Buffer.alloc(1024)); // two zero blocks end the archive
  return Buffer.concat(parts);
}

const sha256 = (b: Buffer): string => `sha256:${createHash('sha256').update(b).digest('hex')}`;

/** A one-layer image as a `docker save` archive, tagged `ref`, whose entrypoint is `entrypoint`. */
export function dockerArchive(o: {
  ref: string;
  files: readonly ArchiveFile[];
  entrypoint: readonly string[];
}): Buffer {
  const layer = tarOf(o.files);
  const config = Buffer.from(
    JSON.stringify({
      architecture: 'amd64',
      os: 'linux',
      config: { Entrypoint: [...o.entrypoint], Env: ['PATH=/'] },
      rootfs: { type: 'layers', diff_ids: [sha256(layer)] },
    }),
  );
  const configName = `${sha256(config).slice('sha256:'.length)}.json`;
  const manifest = Buffer.from(JSON.stringify([{ Config: configName, RepoTags: [o.ref], Layers: ['layer.tar'] }]));
  return tarOf([
    { path: 'manifest.json', mode: 0o644, data: manifest },
    { path: configName, mode: 0o644, data: config },
    { path: 'layer.tar', mode: 0o644, data: layer },
  ]);
}
