/**
 * syncVolume (Kubernetes pv_controller.go, v1.30): drive a volume's phase from its claimRef and the
 * claim it names. A claim missing from the controller cache is looked up in the informer and then
 * the API before the volume is released — a stale cache must never reclaim a live binding.
 */
import { claimEvent, clone, unbindVolume, updateVolumePhase, volumeEvent } from './bind.js';
import type { SyncContext } from './context.js';
import { decideBoundVolume } from './decide.js';
import { reclaimVolume } from './reclaim.js';
import { maybeReuseReleased } from './reuse.js';
import {
  ANN_PROVISIONED_BY,
  ANN_MIGRATED_TO,
  REASONS,
  claimKey,
  claimRefKey,
  type PersistentVolume,
  type PersistentVolumeClaim,
} from './types.js';
import { NotFoundError, assertNever } from '../../util/errors.js';

async function liveClaimOrNull(c: SyncContext, namespace: string, name: string): Promise<PersistentVolumeClaim | null> {
  try {
    return await c.fx.liveClaim(namespace, name);
  } catch (e) {
    if (e instanceof NotFoundError) return null;
    throw e;
  }
}

/** A provisioned volume loses a stale migrated-to annotation (no plugin is CSI-migrated here). */
async function updateVolumeMigrationAnnotations(c: SyncContext, volume: PersistentVolume): Promise<PersistentVolume> {
  const anns = volume.metadata?.annotations;
  if (!anns || anns[ANN_PROVISIONED_BY] === undefined || !anns[ANN_MIGRATED_TO]) return volume;
  const next = clone(volume);
  const nextAnns = { ...anns };
  delete nextAnns[ANN_MIGRATED_TO];
  if (next.metadata) next.metadata.annotations = nextAnns;
  const stored = await c.fx.updateVolume(next);
  c.cache.storeVolume(stored);
  return stored;
}

export async function syncVolume(c: SyncContext, input: PersistentVolume): Promise<void> {
  let volume = await updateVolumeMigrationAnnotations(c, input);
  const ref = volume.spec?.claimRef;
  if (!ref || !ref.uid) {
    // Unused, or pre-bound by the user to a claim that the claim sync will bind.
    await updateVolumePhase(c, volume, 'Available', '');
    return;
  }
  const ns = ref.namespace ?? '';
  const name = ref.name ?? '';
  let claim: PersistentVolumeClaim | null = c.cache.getClaim(claimRefKey(ref)) ?? null;
  if (!claim && volume.status?.phase !== 'Released' && volume.status?.phase !== 'Failed') {
    // Under load the claim may not have reached our cache yet (external binders, provisioners).
    claim = c.listers.claim(ns, name) ?? (await liveClaimOrNull(c, ns, name));
  }
  if (claim && claim.metadata?.uid !== ref.uid) {
    // Either the claim was re-created under the same name or our copy is stale: ask the API.
    const live = await liveClaimOrNull(c, ns, name);
    claim = live && live.metadata?.uid === ref.uid ? live : null;
  }

  const action = decideBoundVolume(volume, claim);
  switch (action.kind) {
    case 'release': {
      // Keep a Failed phase visible to the user while the reclaim is retried.
      if (volume.status?.phase !== 'Released' && volume.status?.phase !== 'Failed') {
        volume = await updateVolumePhase(c, volume, 'Released', '');
      }
      await reclaimVolume(c, volume);
      if (!claim && volume.spec?.persistentVolumeReclaimPolicy === 'Retain') await maybeReuseReleased(c, volume);
      return;
    }
    case 'volumeModeMismatch':
      // findBestMatch never offers this volume to the claim: say why on both objects.
      volumeEvent(c, volume, 'Warning', REASONS.VolumeMismatch, action.volumeMessage);
      if (claim) claimEvent(c, claim, 'Warning', REASONS.VolumeMismatch, action.claimMessage);
      return;
    case 'enqueueClaim':
      if (claim) c.fx.enqueueClaim(claimKey(claim));
      return;
    case 'bound':
      await updateVolumePhase(c, volume, 'Bound', '');
      return;
    case 'unbind':
      await unbindVolume(c, volume);
      return;
    default:
      assertNever(action);
  }
}
