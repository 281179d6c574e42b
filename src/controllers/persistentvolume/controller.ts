/**
 * Entry points for the wiring (informers + work queues in src/client). Level-triggered: each key is
 * resolved against the informer, the controller cache is refreshed (older versions ignored), and
 * the matching sync runs. Deletions clean the cache and poke the other side: a deleted claim
 * enqueues its volume (so it is Released at once), a deleted volume enqueues its claim (Lost).
 * Errors propagate: the runtime requeues retryable ones (a Conflict requeues at once).
 */
import type { SyncContext } from './context.js';
import { syncClaim } from './sync-claim.js';
import { syncVolume } from './sync-volume.js';
import { claimKey, claimRefKey, type PersistentVolume, type PersistentVolumeClaim } from './types.js';

export { syncClaim } from './sync-claim.js';
export { syncVolume } from './sync-volume.js';
export { newPvControllerCache } from './cache.js';

export interface Requeue {
  volume(name: string): void;
  claim(key: string): void;
}

/** Volume key from the queue: `informerVolume` is the informer's copy or undefined when deleted. */
export async function handleVolumeKey(
  c: SyncContext,
  q: Requeue,
  name: string,
  informerVolume: PersistentVolume | undefined,
): Promise<void> {
  if (informerVolume) {
    if (!c.cache.storeVolume(informerVolume)) return; // older than what we wrote: skip
    await syncVolume(c, c.cache.volumes.get(name) ?? informerVolume);
    return;
  }
  const cached = c.cache.volumes.get(name);
  if (!cached) return;
  c.cache.deleteVolume(name);
  const ref = cached.spec?.claimRef;
  if (ref) q.claim(claimRefKey(ref));
}

/** Claim key from the queue (`ns/name`): `informerClaim` is undefined when the claim is gone. */
export async function handleClaimKey(
  c: SyncContext,
  q: Requeue,
  key: string,
  informerClaim: PersistentVolumeClaim | undefined,
): Promise<void> {
  if (informerClaim) {
    if (!c.cache.storeClaim(informerClaim)) return;
    await syncClaim(c, c.cache.getClaim(key) ?? informerClaim);
    return;
  }
  const cached = c.cache.getClaim(key);
  if (!cached) return;
  c.cache.deleteClaim(key);
  const vn = cached.spec?.volumeName;
  if (vn) q.volume(vn);
}

/** Periodic resync (Kubernetes: every 15 s): every known claim and volume goes through the queues again. */
export function resync(
  q: Requeue,
  informerClaims: readonly PersistentVolumeClaim[],
  informerVolumes: readonly PersistentVolume[],
): void {
  for (const c of informerClaims) q.claim(claimKey(c));
  for (const v of informerVolumes) q.volume(v.metadata?.name ?? '');
}
