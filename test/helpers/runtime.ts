/**
 * What the container runtime tests need, without the internet: containerd + runc, a loopback
 * `docker-registry`, skopeo, and a tiny OCI image built here from Debian's static busybox.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  openSync,
  readSync,
  closeSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  copyFileSync,
  writeFileSync,
} from 'node:fs';
import { freeLoopbackPort } from '../../src/util/freeport.js';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { missingRuntimePrograms } from '../../src/node/runtime/containerd.js';
import { isRoot } from './env.js';
import { api } from './http.js';
import type { RunningUp } from './up.js';
import { until } from '../volumemanager-kit.js';

const run = promisify(execFile);
export const BUSYBOX = '/bin/busybox';

/** True when `path` is an ELF executable without a program interpreter (PT_INTERP), i.e. static. */
function isStaticElf(path: string): boolean {
  if (!existsSync(path)) return false;
  const fd = openSync(path, 'r');
  try {
    const head = Buffer.alloc(4096);
    readSync(fd, head, 0, head.length, 0);
    if (head.readUInt32BE(0) !== 0x7f454c46 || head[4] !== 2) return false; // ELF, 64-bit
    const phoff = Number(head.readBigUInt64LE(0x20));
    const phentsize = head.readUInt16LE(0x36);
    const phnum = head.readUInt16LE(0x38);
    for (let i = 0; i < phnum; i++) {
      const off = phoff + i * phentsize;
      if (off + 4 > head.length) return false;
      if (head.readUInt32LE(off) === 3) return false; // PT_INTERP
    }
    return true;
  } finally {
    closeSync(fd);
  }
}

const onPath = (p: string): boolean =>
  [...(process.env.PATH ?? '').split(':'), '/usr/sbin', '/sbin'].some((d) => d !== '' && existsSync(join(d, p)));

/** Why the runtime tests cannot run here (empty when they can); each entry names what is missing. */
export function runtimeTestsMissing(): string[] {
  const missing: string[] = [];
  if (!isRoot) missing.push('root (containers and mounts)');
  for (const p of missingRuntimePrograms()) missing.push(`${p} (the container runtime)`);
  if (!onPath('docker-registry')) missing.push('docker-registry (the loopback registry pods pull from)');
  if (!onPath('skopeo')) missing.push('skopeo (pushes the test image)');
  if (!isStaticElf(BUSYBOX)) missing.push(`a static ${BUSYBOX} (busybox-static; the test image is built from it)`);
  return missing;
}

export interface Registry {
  /** `127.0.0.1:<port>` */
  readonly host: string;
  /** Builds an image from busybox whose default command is `cmd` and pushes it as `<host>/<name>:<tag>`; returns the reference. */
  push(name: string, tag: string, cmd: readonly string[]): Promise<string>;
  stop(): Promise<void>;
}

/** A docker-registry on loopback with its own config and storage under `dir`; resolves once it answers /v2/. */
export async function startRegistry(dir: string): Promise<Registry> {
  mkdirSync(join(dir, 'storage'), { recursive: true });
  const port = await freeLoopbackPort();
  const host = `127.0.0.1:${port}`;
  const config = join(dir, 'config.yml');
  writeFileSync(
    config,
    `version: 0.1
log:
  level: warn
storage:
  filesystem:
    rootdirectory: ${join(dir, 'storage')}
http:
  addr: ${host}
`,
  );
  const child: ChildProcess = spawn('docker-registry', ['serve', config], { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      const res = await fetch(`http://${host}/v2/`);
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`docker-registry did not come up on ${host}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  let n = 0;
  return {
    host,
    push: async (name, tag, cmd) => {
      const work = join(dir, `image-${n++}`);
      const archive = await buildBusyboxArchive(work, cmd);
      const ref = `${host}/${name}:${tag}`;
      await run(
        'skopeo',
        [
          '--insecure-policy',
          'copy',
          '--quiet',
          '--dest-tls-verify=false',
          `docker-archive:${archive}`,
          `docker://${ref}`,
        ],
        { timeout: 120_000 },
      );
      rmSync(work, { recursive: true, force: true });
      return ref;
    },
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

const APPLETS = [
  'sh',
  'cat',
  'echo',
  'sleep',
  'ls',
  'mkdir',
  'touch',
  'true',
  'false',
  'test',
  'id',
  'env',
  'pwd',
  'wc',
  'grep',
  'sync',
  'tar',
  'stty',
  'rm',
  'httpd',
];

/** A docker-archive tar (one layer: busybox and its applet links in /bin) with `cmd` as the default command, tagged `repoTag` when given. */
export async function buildBusyboxArchive(work: string, cmd: readonly string[], repoTag?: string): Promise<string> {
  const rootfs = join(work, 'rootfs');
  mkdirSync(join(rootfs, 'bin'), { recursive: true });
  mkdirSync(join(rootfs, 'tmp'), { recursive: true });
  copyFileSync(BUSYBOX, join(rootfs, 'bin', 'busybox'));
  for (const a of APPLETS) symlinkSync('busybox', join(rootfs, 'bin', a));
  const layer = join(work, 'layer.tar');
  await run('tar', ['--numeric-owner', '--owner=0', '--group=0', '-C', rootfs, '-cf', layer, 'bin', 'tmp']);
  const diffId = `sha256:${createHash('sha256').update(readFileSync(layer)).digest('hex')}`;
  const config = {
    architecture: 'amd64',
    os: 'linux',
    config: { Env: ['PATH=/bin'], Cmd: [...cmd] },
    rootfs: { type: 'layers', diff_ids: [diffId] },
  };
  writeFileSync(join(work, 'config.json'), JSON.stringify(config));
  writeFileSync(
    join(work, 'manifest.json'),
    JSON.stringify([{ Config: 'config.json', RepoTags: repoTag ? [repoTag] : [], Layers: ['layer.tar'] }]),
  );
  const archive = join(work, 'image.tar');
  await run('tar', ['-C', work, '-cf', archive, 'manifest.json', 'config.json', 'layer.tar']);
  return archive;
}

/** Unmounts whatever is still mounted under `dir` (deepest first): a runtime's leftovers must not outlive a test. */
export async function unmountUnder(dir: string): Promise<void> {
  const mounts = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[4] ?? '')
    .filter((m) => m === dir || m.startsWith(`${dir}/`))
    .sort((a, b) => b.length - a.length);
  for (const m of mounts) await run('umount', ['-l', m]).catch(() => undefined);
}

/**
 * Ends a runtime test's `stowage up` (started with data dir `<dir>/data`): the pods go first
 * (their containers stop, then their volumes), then stowage and its containerd, the registry, any
 * mount left under `dir`, and `dir`.
 */
export async function tearDownRuntimeUp(o: { up?: RunningUp; dir: string; registry?: Registry }): Promise<void> {
  if (o.up) {
    const pods = '/api/v1/namespaces/default/pods';
    await api(o.up.target, 'DELETE', pods).catch(() => undefined);
    await until(
      'every pod gone',
      async () => (await api(o.up!.target, 'GET', pods)).body?.items?.length === 0,
      120_000,
    ).catch(() => undefined);
    o.up.child.kill('SIGTERM');
    await o.up.exit;
  }
  await stopLeftoverContainerd(join(o.dir, 'data', 'containerd'));
  await o.registry?.stop();
  await unmountUnder(o.dir);
  rmSync(o.dir, { recursive: true, force: true });
}

/**
 * Stops a containerd that outlived the stowage that started it (its pid file under `dir`), and
 * kills the shims (and their containers) it left: containers outlive containerd by design.
 */
export async function stopLeftoverContainerd(dir: string): Promise<void> {
  await stopContainerd(dir);
  for (const p of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    let cmd: string[];
    try {
      cmd = readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    const address = cmd[cmd.indexOf('-address') + 1] ?? '';
    if (!cmd[0]?.includes('containerd-shim') || !address.startsWith(`${dir}/`)) continue;
    const children = readFileSync(`/proc/${p}/task/${p}/children`, 'utf8')
      .trim()
      .split(/\s+/)
      .filter((c) => c !== '');
    for (const c of children) kill(Number(c));
    kill(Number(p));
  }
}

function kill(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

async function stopContainerd(dir: string): Promise<void> {
  let pid: number;
  try {
    pid = Number(readFileSync(join(dir, 'containerd.pid'), 'utf8').trim());
  } catch {
    return;
  }
  const alive = (): boolean => {
    try {
      process.kill(pid, 0);
      return !readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z ');
    } catch {
      return false;
    }
  };
  if (!alive()) return;
  process.kill(pid, 'SIGTERM');
  const deadline = Date.now() + 10_000;
  while (alive() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  if (alive()) process.kill(pid, 'SIGKILL');
}
