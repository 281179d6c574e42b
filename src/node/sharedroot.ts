/**
 * The node agent's root directory made a shared mount when containers run (the kubelet's
 * setupDataDirs), so that HostToContainer and Bidirectional volume mounts propagate; the bind it
 * made is undone at stop when no volume is mounted below any more.
 */
import { makeRShared, releaseRShared, type SharedPlan } from '../mount/index.js';
import { toStowageError } from '../util/errors.js';
import type { Logger } from '../util/log.js';

export interface SharedRoot {
  readonly plan: SharedPlan;
  release(): Promise<void>;
}

export async function shareRootDir(rootDir: string, log: Logger): Promise<SharedRoot> {
  const plan = await makeRShared(rootDir);
  if (plan.kind === 'blocked')
    log.warn('root dir left unshared: volumes are mounted below it and a bind would hide them', {
      root: rootDir,
      mounted: plan.below.length,
    });
  else if (plan.kind !== 'shared') log.info('root dir made a shared mount', { root: rootDir, how: plan.kind });
  return {
    plan,
    release: async () => {
      try {
        if (await releaseRShared(rootDir, plan)) log.info('root dir bind mount removed', { root: rootDir });
      } catch (e) {
        log.warn('could not remove the root dir bind mount', { root: rootDir, error: toStowageError(e).message });
      }
    },
  };
}
