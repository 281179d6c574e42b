/**
 * syncClaim and its two halves (Kubernetes pv_controller.go, v1.30). A claim without
 * `pv.kubernetes.io/bind-completed` is unbound: find or honour its volume, else wait / hand off to a
 * provisioner. A claim with it is bound: keep the pair consistent or declare it Lost.
 */
import {
  bind,
  bindClaimSide,
  bindVolumeSide,
  claimEvent,
  clone,
  hasAnnotation,
  unbindVolume,
  updateClaimStatus,
  updateClaimStatusWithEvent,
} from './bind.js';
import type { SyncContext } from './context.js';
import { decideBoundClaim, decideClaimSide, decideNoMatch, decideRequestedVolume } from './decide.js';
import type { MatchOptions } from './match.js';
import { claimClass, claimHasClass, isDefaultStorageClass } from '../../kube/class.js';
import { provisionClaim } from './provision.js';
import { assertNever } from '../../util/errors.js';
import {
  ANN_BETA_STORAGE_PROVISIONER,
  ANN_BIND_COMPLETED,
  ANN_MIGRATED_TO,
  ANN_SELECTED_NODE,
  ANN_STORAGE_PROVISIONER,
  REASONS,
  claimKey,
  claimRefKey,
  type Pod,
  type PersistentVolume,
  type PersistentVolumeClaim,
  type StorageClass,
} from './types.js';

export class SyncError extends Error {}

export async function syncClaim(c: SyncContext, claim: PersistentVolumeClaim): Promise<void> {
  const current = await updateClaimMigrationAnnotations(c, claim);
  if (!hasAnnotation(current, ANN_BIND_COMPLETED)) await syncUnboundClaim(c, current);
  else await syncBoundClaim(c, current);
}

/** No plugin is CSI-migrated in Stowage: a claim naming a provisioner loses a stale migrated-to. */
async function updateClaimMigrationAnnotations(
  c: SyncContext,
  claim: PersistentVolumeClaim,
): Promise<PersistentVolumeClaim> {
  const anns = claim.metadata?.annotations;
  if (!anns || (anns[ANN_STORAGE_PROVISIONER] === undefined && anns[ANN_BETA_STORAGE_PROVISIONER] === undefined))
    return claim;
  if (!anns[ANN_MIGRATED_TO]) return claim;
  const next = clone(claim);
  const nextAnns = { ...anns };
  delete nextAnns[ANN_MIGRATED_TO];
  if (next.metadata) next.metadata.annotations = nextAnns;
  const stored = await c.fx.updateClaim(next);
  c.cache.storeClaim(stored);
  return stored;
}

/** IsDelayBindingMode: the claim's class exists and says WaitForFirstConsumer. */
export function isDelayBindingMode(claim: PersistentVolumeClaim, cls: StorageClass | undefined): boolean {
  const name = claimClass(claim);
  if (name === '' || !cls) return false;
  if (!cls.volumeBindingMode) throw new SyncError(`VolumeBindingMode not set for StorageClass "${name}"`);
  return cls.volumeBindingMode === 'WaitForFirstConsumer';
}

/** util.IsPodTerminated. */
export function isPodTerminated(pod: Pod): boolean {
  const phase = pod.status?.phase;
  if (phase === 'Failed' || phase === 'Succeeded') return true;
  if (!pod.metadata?.deletionTimestamp) return false;
  return (pod.status?.containerStatuses ?? []).every((s) => s.state?.terminated != null || s.state?.waiting != null);
}

/** The event a WaitForFirstConsumer claim gets while it waits (emitEventForUnboundDelayBindingClaim). */
export function delayBindingEvent(
  _claim: PersistentVolumeClaim,
  pods: readonly Pod[],
): { reason: 'WaitForFirstConsumer' | 'WaitForPodScheduled'; message: string } {
  const unscheduled = pods.filter((p) => !isPodTerminated(p) && !p.spec?.nodeName).map((p) => p.metadata?.name ?? '');
  if (unscheduled.length === 0)
    return { reason: REASONS.WaitForFirstConsumer, message: 'waiting for first consumer to be created before binding' };
  if (unscheduled.length > 1)
    return {
      reason: REASONS.WaitForPodScheduled,
      message: `waiting for pods ${unscheduled.join(',')} to be scheduled`,
    };
  return { reason: REASONS.WaitForPodScheduled, message: `waiting for pod ${unscheduled[0] ?? ''} to be scheduled` };
}

/** util.GetDefaultClass: newest default-annotated class, ties by name. */
export function defaultStorageClass(classes: readonly StorageClass[]): StorageClass | undefined {
  const ts = (s: StorageClass): number => Date.parse(s.metadata?.creationTimestamp ?? '') || 0;
  return [...classes]
    .filter(isDefaultStorageClass)
    .sort((a, b) => ts(b) - ts(a) || ((a.metadata?.name ?? '') < (b.metadata?.name ?? '') ? -1 : 1))[0];
}

/** Retroactive default StorageClass (GA 1.28): a class-less claim gets today's default. */
async function assignDefaultStorageClass(c: SyncContext, claim: PersistentVolumeClaim): Promise<boolean> {
  if (claimHasClass(claim)) return false;
  const cls = defaultStorageClass(c.listers.storageClasses());
  if (!cls?.metadata?.name) return false;
  const next = clone(claim);
  next.spec = { ...(next.spec ?? {}), storageClassName: cls.metadata.name };
  await c.fx.updateClaim(next);
  // Kubernetes restarts the sync from the informer's update event; requeue so we do not depend on it.
  c.fx.enqueueClaim(claimKey(claim));
  return true;
}

export async function syncUnboundClaim(c: SyncContext, claim: PersistentVolumeClaim): Promise<void> {
  const volumeName = claim.spec?.volumeName ?? '';
  if (volumeName === '') {
    const cls = c.listers.storageClass(claimClass(claim));
    const delayBinding = isDelayBindingMode(claim, cls);
    let volume;
    let match: MatchOptions = { delayBinding };
    try {
      catchUpPrebound(c, claim);
      volume = c.cache.volumes.findBestMatch(claim, match);
      const selected = claim.metadata?.annotations?.[ANN_SELECTED_NODE];
      if (!volume && delayBinding && selected !== undefined && c.options.bindDelayedClaimsOnSelectedNode) {
        const node = c.listers.node(selected);
        if (node) volume = c.cache.volumes.findBestMatch(claim, (match = { delayBinding, node }));
      }
    } catch (e) {
      throw new SyncError(
        `error finding PV for claim "${claimKey(claim)}": ${e instanceof Error ? e.message : String(e)}`,
        { cause: e },
      );
    }
    if (volume) {
      const name = volume.metadata?.name ?? '';
      const key = claimKey(claim);
      c.cache.volumes.reserve(name, key);
      try {
        await bindMatchedVolume(c, volume, claim, match);
      } finally {
        c.cache.volumes.release(name, key);
      }
      return;
    }
    if (await assignDefaultStorageClass(c, claim)) return;
    const action = decideNoMatch(
      delayBinding,
      claim.metadata?.annotations?.[ANN_SELECTED_NODE] !== undefined,
      claimClass(claim),
    );
    switch (action.kind) {
      case 'waitForConsumer': {
        const ev = delayBindingEvent(
          claim,
          c.listers.podsForClaim(claim.metadata?.namespace ?? '', claim.metadata?.name ?? ''),
        );
        claimEvent(c, claim, 'Normal', ev.reason, ev.message);
        break;
      }
      case 'provision':
        // The hand-off writes the claim itself; the bind happens in a later sync once a PV appears.
        c.cache.markWaiting(claimKey(claim), claimClass(claim));
        provisionClaim(c, claim);
        return;
      case 'failedBinding':
        c.cache.markWaiting(claimKey(claim), '');
        claimEvent(c, claim, 'Normal', REASONS.FailedBinding, action.message);
        break;
      default:
        assertNever(action);
    }
    await updateClaimStatus(c, claim, 'Pending', null);
    return;
  }

  // The user asked for a specific volume.
  const volume = c.cache.volumes.get(volumeName);
  const action = decideRequestedVolume(claim, volume);
  switch (action.kind) {
    case 'pending':
      await updateClaimStatus(c, claim, 'Pending', null);
      return;
    case 'mismatch':
      claimEvent(c, claim, 'Warning', REASONS.VolumeMismatch, action.message);
      await updateClaimStatus(c, claim, 'Pending', null);
      return;
    case 'bind':
      if (volume) await bind(c, volume, claim);
      return;
    case 'claimedByOther':
      claimEvent(c, claim, 'Warning', REASONS.FailedBinding, action.message);
      if (!action.controllerBound) {
        await updateClaimStatus(c, claim, 'Pending', null);
        return;
      }
      throw new SyncError(
        `invalid binding of claim "${claimKey(claim)}" to volume "${volumeName}": volume already claimed by "${volume?.spec?.claimRef ? claimRefKey(volume.spec.claimRef) : ''}"`,
      );
    default:
      assertNever(action);
  }
}

/**
 * Take the informer's copies of the volumes pre-bound to `claim` into the controller cache (older
 * ones are refused there): a volume the informer has delivered but no volume worker has reached yet
 * must not be missing from the claim's match. Kubernetes' volume worker may be that far along too.
 */
function catchUpPrebound(c: SyncContext, claim: PersistentVolumeClaim): void {
  for (const v of c.listers.volumesPreboundTo(claim.metadata?.namespace ?? '', claim.metadata?.name ?? ''))
    c.cache.storeVolume(v);
}

/** Bind a volume findBestMatch gave the claim; the claim side waits for a second look (decideClaimSide). */
async function bindMatchedVolume(
  c: SyncContext,
  volume: PersistentVolume,
  claim: PersistentVolumeClaim,
  match: MatchOptions,
): Promise<void> {
  const bound = await bindVolumeSide(c, volume, claim);
  catchUpPrebound(c, claim);
  const action = decideClaimSide(bound, c.cache.volumes.findBestMatch(claim, match));
  switch (action.kind) {
    case 'commit':
      await bindClaimSide(c, claim, bound);
      return;
    case 'yield':
      // As syncVolume does with a volume the controller bound to a claim that went elsewhere.
      await unbindVolume(c, bound);
      c.fx.enqueueClaim(claimKey(claim));
      return;
    default:
      assertNever(action);
  }
}

export async function syncBoundClaim(c: SyncContext, claim: PersistentVolumeClaim): Promise<void> {
  const volume = claim.spec?.volumeName ? c.cache.volumes.get(claim.spec.volumeName) : undefined;
  const action = decideBoundClaim(claim, volume);
  switch (action.kind) {
    case 'lost':
      await updateClaimStatusWithEvent(c, claim, 'Lost', null, 'Warning', action.reason, action.message);
      return;
    case 'bind':
      if (volume) await bind(c, volume, claim);
      return;
    default:
      assertNever(action);
  }
}
