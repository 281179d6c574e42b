/**
 * Released → Available, on request (Kubernetes lacks it: kubernetes/kubernetes#91847).
 * An administrator sets `stowage.io/reuse-released: "true"` on a Released volume with policy Retain.
 * The controller clears the claimRef only after asking the API server (not a cache) whether the
 * claim named by the ref still exists with the ref's UID; if it does, nothing changes and a warning
 * says why. The claimRef, bound-by-controller and the request annotation go in one resourceVersion-
 * guarded write, so a concurrent edit makes it fail and retry rather than clobber. Data is NOT wiped.
 */
import { clone, updateVolumePhase, volumeEvent } from './bind.js';
import type { SyncContext } from './context.js';
import { ANN_BOUND_BY_CONTROLLER, ANN_REUSE_RELEASED, REASONS, type PersistentVolume } from './types.js';
import { ignoreNotFound } from '../../util/errors.js';

export type ReuseDecision = { kind: 'none' } | { kind: 'check'; namespace: string; name: string; uid: string };

/** Pure: does this volume ask to be reused, and which claim must be proven gone first? */
export function reuseDecision(volume: PersistentVolume): ReuseDecision {
  if (volume.metadata?.annotations?.[ANN_REUSE_RELEASED] !== 'true') return { kind: 'none' };
  if (volume.status?.phase !== 'Released' || volume.spec?.persistentVolumeReclaimPolicy !== 'Retain')
    return { kind: 'none' };
  const ref = volume.spec?.claimRef;
  if (!ref?.uid) return { kind: 'none' };
  return { kind: 'check', namespace: ref.namespace ?? '', name: ref.name ?? '', uid: ref.uid };
}

export async function maybeReuseReleased(c: SyncContext, volume: PersistentVolume): Promise<void> {
  const d = reuseDecision(volume);
  if (d.kind === 'none') return;
  let stillThere = false;
  try {
    const live = await c.fx.liveClaim(d.namespace, d.name);
    stillThere = live.metadata?.uid === d.uid;
  } catch (e) {
    ignoreNotFound(e);
  }
  if (stillThere) {
    volumeEvent(
      c,
      volume,
      'Warning',
      REASONS.VolumeReuseRefused,
      `claim ${d.namespace}/${d.name} (uid ${d.uid}) still exists; the volume stays Released`,
    );
    return;
  }
  const next = clone(volume);
  if (next.spec) delete next.spec.claimRef;
  const anns = { ...(next.metadata?.annotations ?? {}) };
  delete anns[ANN_REUSE_RELEASED];
  delete anns[ANN_BOUND_BY_CONTROLLER];
  if (next.metadata) {
    if (Object.keys(anns).length === 0) delete next.metadata.annotations;
    else next.metadata.annotations = anns;
  }
  const stored = await c.fx.updateVolume(next);
  c.cache.storeVolume(stored);
  const avail = await updateVolumePhase(c, stored, 'Available', '');
  volumeEvent(
    c,
    avail,
    'Normal',
    REASONS.VolumeReused,
    `previous claim ${d.namespace}/${d.name} (uid ${d.uid}) is gone; the volume is Available again (its data was not erased)`,
  );
}
