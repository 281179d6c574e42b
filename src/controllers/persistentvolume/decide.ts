/**
 * The branch decisions of syncClaim and syncVolume as pure functions of the objects involved.
 * The async procedures in sync-claim.ts / sync-volume.ts do the lookups, call these, and execute
 * the chosen action through Effects. Each comment states the Kubernetes rule behind a branch.
 */
import { hasAnnotation } from './bind.js';
import { checkVolumeModeMismatches, checkVolumeSatisfyClaim, isVolumeBoundToClaim } from './match.js';
import {
  ANN_BOUND_BY_CONTROLLER,
  ANN_PROVISIONED_BY,
  REASONS,
  type PersistentVolume,
  type PersistentVolumeClaim,
} from './types.js';

/** A claim naming `spec.volumeName`, not yet bind-completed. */
export type RequestedVolumeAction =
  | { kind: 'pending' } // the volume does not exist (yet): wait, Pending
  | { kind: 'mismatch'; message: string } // unbound but unsuitable: VolumeMismatch, Pending
  | { kind: 'bind' } // unbound and suitable, or already (pre-)bound to this claim
  | { kind: 'claimedByOther'; message: string; controllerBound: boolean };

export function decideRequestedVolume(
  claim: PersistentVolumeClaim,
  volume: PersistentVolume | undefined,
): RequestedVolumeAction {
  if (!volume) return { kind: 'pending' };
  const name = volume.metadata?.name ?? '';
  if (!volume.spec?.claimRef) {
    const why = checkVolumeSatisfyClaim(volume, claim);
    return why === null
      ? { kind: 'bind' }
      : { kind: 'mismatch', message: `Cannot bind to requested volume "${name}": ${why}` };
  }
  if (isVolumeBoundToClaim(volume, claim)) return { kind: 'bind' };
  // A user's claim retries later; a controller-bound one means someone removed bind-completed.
  return {
    kind: 'claimedByOther',
    message: `volume "${name}" already bound to a different claim.`,
    controllerBound: hasAnnotation(claim, ANN_BOUND_BY_CONTROLLER),
  };
}

/** A volume the controller chose for a claim, after the volume side of the bind (steps 1–2). */
export type ClaimSideAction =
  | { kind: 'commit' } // write the claim side: the binding is final
  | { kind: 'yield' }; // undo our volume side and sync the claim again: another volume is its match now

/**
 * FindMatchingVolume returns a volume pre-bound to the claim before any other, in any phase. A
 * volume the controller picked is only as good as the view it was picked on: a pre-bound volume
 * created meanwhile (in one burst with it) was missing from that view, and Kubernetes, which syncs
 * a waiting claim only every 15 s, would have seen both. So the claim side is written only if the
 * chosen volume is still the claim's best match on the freshest view (`best`, found after the
 * volume side with the user's pre-binding ahead of ours). A volume the user pre-bound is final at once.
 */
export function decideClaimSide(chosen: PersistentVolume, best: PersistentVolume | null): ClaimSideAction {
  if (!hasAnnotation(chosen, ANN_BOUND_BY_CONTROLLER)) return { kind: 'commit' };
  if (best === null || best.metadata?.name === chosen.metadata?.name) return { kind: 'commit' };
  return { kind: 'yield' };
}

/** A claim with no volume found for it. */
export type NoMatchAction =
  { kind: 'waitForConsumer' } | { kind: 'provision' } | { kind: 'failedBinding'; message: string };

export function decideNoMatch(delayBinding: boolean, hasSelectedNode: boolean, className: string): NoMatchAction {
  // WaitForFirstConsumer without a node chosen by the scheduler: nothing to do but say so.
  if (delayBinding && !hasSelectedNode) return { kind: 'waitForConsumer' };
  if (className !== '') return { kind: 'provision' };
  return {
    kind: 'failedBinding',
    message: 'no persistent volumes available for this claim and no storage class is set',
  };
}

/** A bind-completed claim. */
export type BoundClaimAction =
  { kind: 'lost'; reason: typeof REASONS.ClaimLost | typeof REASONS.ClaimMisbound; message: string } | { kind: 'bind' }; // re-bind an unbound volume, or confirm a correct pair (no writes)

export function decideBoundClaim(claim: PersistentVolumeClaim, volume: PersistentVolume | undefined): BoundClaimAction {
  if (!claim.spec?.volumeName) {
    return {
      kind: 'lost',
      reason: REASONS.ClaimLost,
      message: 'Bound claim has lost reference to PersistentVolume. Data on the volume is lost!',
    };
  }
  if (!volume)
    return {
      kind: 'lost',
      reason: REASONS.ClaimLost,
      message: 'Bound claim has lost its PersistentVolume. Data on the volume is lost!',
    };
  const ref = volume.spec?.claimRef;
  // An unbound volume may just be our own write not yet seen: bind again rather than declare loss.
  if (!ref || (ref.uid ?? '') === (claim.metadata?.uid ?? '')) return { kind: 'bind' };
  return {
    kind: 'lost',
    reason: REASONS.ClaimMisbound,
    message: 'Two claims are bound to the same volume, this one is bound incorrectly',
  };
}

/** A volume whose claimRef carries a UID, after the claim lookup (null: gone or re-created). */
export type BoundVolumeAction =
  | { kind: 'release' } // Released (keeping Failed) and run the reclaim policy
  | { kind: 'volumeModeMismatch'; volumeMessage: string; claimMessage: string }
  | { kind: 'enqueueClaim' } // half-bound: the claim sync finishes it
  | { kind: 'bound' }
  | { kind: 'unbind' }; // claim bound elsewhere: roll back our binding / drop the UID of a user's

export function decideBoundVolume(volume: PersistentVolume, claim: PersistentVolumeClaim | null): BoundVolumeAction {
  if (!claim) return { kind: 'release' };
  const claimVolume = claim.spec?.volumeName ?? '';
  if (claimVolume === '') {
    if (checkVolumeModeMismatches(claim, volume)) {
      return {
        kind: 'volumeModeMismatch',
        volumeMessage: `Cannot bind PersistentVolume to requested PersistentVolumeClaim "${claim.metadata?.name ?? ''}" due to incompatible volumeMode.`,
        claimMessage: `Cannot bind PersistentVolume "${volume.metadata?.name ?? ''}" to requested PersistentVolumeClaim due to incompatible volumeMode.`,
      };
    }
    return { kind: 'enqueueClaim' };
  }
  if (claimVolume === volume.metadata?.name) return { kind: 'bound' };
  // Provisioned for this claim, which went elsewhere: the volume is not needed, delete it.
  if (hasAnnotation(volume, ANN_PROVISIONED_BY) && volume.spec?.persistentVolumeReclaimPolicy === 'Delete')
    return { kind: 'release' };
  return { kind: 'unbind' };
}
