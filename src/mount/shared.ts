/**
 * The kubelet's root directory as a shared mount (its setupDataDirs → MakeRShared), so that
 * mounts below it propagate: a volume the node agent mounts under `pods/` reaches a container that
 * mounts the directory with HostToContainer (rslave), and a mount a privileged container makes
 * there with Bidirectional (rshared) reaches the host and the other containers. The CRI runtime
 * refuses those two modes on a source that is not on a shared (or, for HostToContainer, slave) mount.
 */
import { rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { run, type RunOptions } from './exec.js';
import { mountsUnder, readMountInfo, type MountInfoEntry } from './mountinfo.js';
import { unmount } from './mount.js';

/** The mount `p` lies on: the topmost entry whose mount point is `p` or its nearest ancestor. */
export function mountHolding(p: string, entries: readonly MountInfoEntry[]): MountInfoEntry | undefined {
  const target = path.resolve(p);
  let best: MountInfoEntry | undefined;
  for (const e of entries) {
    const mp = e.mountPoint;
    const holds = mp === target || mp === '/' || target.startsWith(mp.endsWith('/') ? mp : `${mp}/`);
    if (holds && (!best || mp.length >= best.mountPoint.length)) best = e;
  }
  return best;
}

export const isShared = (e: MountInfoEntry): boolean => e.optionalFields.some((f) => f.startsWith('shared:'));

export type SharedPlan =
  /** The mount holding the directory propagates already. */
  | { readonly kind: 'shared' }
  /** The directory is a mount point of its own: its propagation is changed in place. */
  | { readonly kind: 'reshare' }
  /** Bind the directory on itself, then make that mount rshared. */
  | { readonly kind: 'bind' }
  /**
   * Mounts exist below a directory that is not a mount point: a bind on top would hide them (and
   * the volume manager would then unmount copies, leaving the originals behind). Left as it is.
   */
  | { readonly kind: 'blocked'; readonly below: readonly string[] };

/** What makeRShared does for `dir` given the mount table. Pure. */
export function planRShared(dir: string, entries: readonly MountInfoEntry[]): SharedPlan {
  const target = path.resolve(dir);
  const holder = mountHolding(target, entries);
  if (holder && isShared(holder)) return { kind: 'shared' };
  if (holder?.mountPoint === target) return { kind: 'reshare' };
  const prefix = `${target}/`;
  const below = entries.filter((e) => e.mountPoint.startsWith(prefix)).map((e) => e.mountPoint);
  return below.length ? { kind: 'blocked', below } : { kind: 'bind' };
}

/** Marks a bind makeRShared made, so that a process started again after a crash still owns it. */
export const RSHARED_MARKER = '.rshared-bind';

const exists = (p: string): Promise<boolean> =>
  stat(p).then(
    () => true,
    () => false,
  );

/**
 * Makes `dir` (which must exist) a shared mount as planRShared says; returns the plan carried
 * out, so that the caller can undo a bind it made (releaseRShared). A bind left by an earlier run
 * (its marker in `dir`) counts as made now.
 */
export async function makeRShared(dir: string, opts: RunOptions = {}): Promise<SharedPlan> {
  const target = path.resolve(dir);
  const entries = await readMountInfo();
  const plan = planRShared(target, entries);
  switch (plan.kind) {
    case 'shared':
      if (mountHolding(target, entries)?.mountPoint === target && (await exists(path.join(target, RSHARED_MARKER))))
        return { kind: 'bind' };
      return plan;
    case 'blocked':
      return plan;
    case 'bind':
      await run('mount', ['--bind', '--', target, target], opts);
      break;
    case 'reshare':
      break;
  }
  try {
    await run('mount', ['--make-rshared', '--', target], opts);
  } catch (e) {
    if (plan.kind === 'bind') await unmount(target, opts).catch(() => undefined);
    throw e;
  }
  if (plan.kind === 'bind') await writeFile(path.join(target, RSHARED_MARKER), '');
  return plan;
}

/**
 * Undoes makeRShared's bind of `dir` when nothing is mounted below it any more; with volumes
 * still mounted it stays (a restarted agent finds it shared), as the kubelet's always does.
 * Returns whether the bind was removed.
 */
export async function releaseRShared(dir: string, plan: SharedPlan, opts: RunOptions = {}): Promise<boolean> {
  if (plan.kind !== 'bind') return false;
  const target = path.resolve(dir);
  const under = await mountsUnder(target);
  if (under.some((m) => m.mountPoint !== target)) return false;
  await rm(path.join(target, RSHARED_MARKER), { force: true });
  await unmount(target, opts);
  return true;
}
