import { mkdir, open, stat } from 'node:fs/promises';
import path from 'node:path';
import { InvalidError } from '../../../util/errors.js';
import { cleanSubPaths } from '../subpath/subpath.js';
import { subPathDir } from '../operations/paths.js';
import { HOST_PATH_TYPES, volumeName, type HostPathType } from '../types.js';
import { setUpSubPaths } from './common.js';
import type { VolumePlugin } from './plugin.js';

const PLUGIN = 'kubernetes.io/host-path';

type Kind = 'directory' | 'file' | 'socket' | 'char' | 'block' | 'other';

async function kindOf(p: string): Promise<Kind | undefined> {
  try {
    const st = await stat(p);
    if (st.isDirectory()) return 'directory';
    if (st.isFile()) return 'file';
    if (st.isSocket()) return 'socket';
    if (st.isCharacterDevice()) return 'char';
    if (st.isBlockDevice()) return 'block';
    return 'other';
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

/** What each type requires, and the kubelet's wording when it is not so (hostpath.go checkType). */
const REQUIRED: Record<Exclude<HostPathType, ''>, { kind: Kind; what: string }> = {
  DirectoryOrCreate: { kind: 'directory', what: 'a directory' },
  Directory: { kind: 'directory', what: 'a directory' },
  FileOrCreate: { kind: 'file', what: 'a file' },
  File: { kind: 'file', what: 'a file' },
  Socket: { kind: 'socket', what: 'a socket file' },
  CharDevice: { kind: 'char', what: 'a character device' },
  BlockDevice: { kind: 'block', what: 'a block device' },
};

/**
 * The hostPath type check, creating what the *OrCreate types ask for: DirectoryOrCreate makes the
 * directory with its parents (0755), FileOrCreate an empty file (0644, its parent must exist).
 * "" checks nothing. A mismatch is `hostPath type check failed: <path> is not <what>`.
 */
export async function checkHostPathType(p: string, type: HostPathType): Promise<void> {
  if (type === '') return;
  const req = REQUIRED[type];
  let kind = await kindOf(p);
  if (kind === undefined && type === 'DirectoryOrCreate') {
    await mkdir(p, { recursive: true, mode: 0o755 });
    kind = await kindOf(p);
  } else if (kind === undefined && type === 'FileOrCreate') {
    await (await open(p, 'a', 0o644)).close();
    kind = await kindOf(p);
  }
  if (kind !== req.kind) throw new InvalidError(`hostPath type check failed: ${p} is not ${req.what}`);
}

/** A hostPath names an absolute path without `..` (API validation): the pod sees that path and nothing above it. */
export function validHostPath(p: string): string | undefined {
  if (!path.isAbsolute(p)) return `hostPath ${p} must be an absolute path`;
  if (p.split('/').includes('..')) return `hostPath ${p} must not contain '..'`;
  return undefined;
}

const asType = (t: string | undefined): HostPathType | undefined =>
  (HOST_PATH_TYPES as readonly string[]).includes(t ?? '') ? ((t ?? '') as HostPathType) : undefined;

/** hostPath pod volumes and hostPath PVs: the host path itself, nothing mounted under pods/. */
export const hostPathPlugin: VolumePlugin = {
  name: PLUGIN,
  canSupport: (src) => (src.kind === 'pv' ? src.pv.spec?.hostPath !== undefined : src.volume.hostPath !== undefined),
  resolve(src, env) {
    const hp = src.kind === 'pv' ? src.pv.spec!.hostPath! : src.volume.hostPath!;
    const specName = src.kind === 'pv' ? (src.pv.metadata?.name ?? '') : src.volume.name;
    const type = asType(hp.type);
    if (type === undefined)
      return {
        problem: `MountVolume.SetUp failed for volume "${specName}" : invalid HostPath type "${hp.type ?? ''}"`,
      };
    const bad = validHostPath(hp.path);
    if (bad) return { problem: `MountVolume.SetUp failed for volume "${specName}" : ${bad}` };
    return {
      volume: volumeName(`${PLUGIN}/${env.ref.uid}-${specName}`),
      pluginIsAttachable: false,
      spec: { plugin: PLUGIN, specName, mode: 'Filesystem', readOnly: false, hostPath: hp.path, hostPathType: type },
    };
  },
  requiresDeviceMount: () => false,
  async setUp(ctx, t) {
    const p = t.spec.hostPath;
    if (!p) throw new InvalidError(`hostPath volume "${t.outerSpecName}" has no path`);
    const type = t.spec.hostPathType ?? '';
    await checkHostPathType(p, type);
    // Unchecked and missing: the container runtime (containerd's CRI) would create the bind source
    // as a directory when starting the container; Stowage has no runtime, so SetUp does it.
    if (type === '' && (await kindOf(p)) === undefined) await mkdir(p, { recursive: true, mode: 0o755 });
    // subPaths stay inside what the path resolves to (symlinks under it may not lead out).
    await setUpSubPaths(ctx, t, p);
    ctx.asw.markVolumeMounted({
      volume: t.volume,
      pod: t.pod,
      outerSpecName: t.outerSpecName,
      spec: t.spec,
      state: 'Mounted',
      hostPath: p,
    });
  },
  async tearDown(ctx, m) {
    await cleanSubPaths(subPathDir(ctx.rootDir, m.pod.uid, m.outerSpecName));
    ctx.asw.markVolumeUnmounted(m.pod.uid, m.volume);
  },
  // Nothing of a hostPath lives under the pod's directory: the populator adds it again and SetUp is idempotent.
  reconstruct: () => Promise.resolve(0),
};
