/**
 * What the garbage collector does with one object (upstream's attemptToDeleteItem,
 * processDeletingDependentsItem and attemptToOrphan), as pure functions over cached state and the
 * owners' states the caller looked up.
 */
import type { OwnerReference } from 'kubernetes-types/meta/v1.js';
import type { KubeObjectLike } from '../../client/rest.js';
import { FOREGROUND_FINALIZER, ORPHAN_FINALIZER } from '../../kube/names.js';
import type { PropagationPolicy } from '../../kube/names.js';

/**
 * An owner as seen from a dependent: `solid` exists with the referenced uid and is not waiting
 * for its dependents; `dangling` is gone or has another uid; `waiting` is being deleted in the
 * foreground; `invalidScope` is a namespaced owner named by a cluster-scoped object (never valid).
 */
export type OwnerState = 'solid' | 'dangling' | 'waiting' | 'invalidScope';

export type GcAction =
  | { readonly kind: 'none' }
  /** Remove the owner's uid from every dependent's ownerReferences, then the `orphan` finalizer. */
  | { readonly kind: 'orphanDependents'; readonly dependents: readonly KubeObjectLike[] }
  /** No blocking dependent is left: drop `foregroundDeletion` so the owner goes. */
  | { readonly kind: 'removeForegroundFinalizer' }
  /** Foreground deletion waits for these (blockOwnerDeletion) dependents to disappear. */
  | { readonly kind: 'waitForDependents'; readonly blocking: readonly KubeObjectLike[] }
  /** A solid owner remains: only drop the references to owners that are gone or waiting. */
  | { readonly kind: 'removeOwnerReferences'; readonly uids: readonly string[] }
  /** No solid owner: delete the object; `unblock` first clears blockOwnerDeletion (cycle guard). */
  | { readonly kind: 'delete'; readonly policy: PropagationPolicy; readonly unblock: boolean }
  /** A cluster-scoped object names a namespaced owner: retrying cannot help, nothing is done. */
  | { readonly kind: 'invalidOwnerScope'; readonly refs: readonly OwnerReference[] };

const NONE: GcAction = { kind: 'none' };

export function hasFinalizer(o: KubeObjectLike, f: string): boolean {
  return (o.metadata?.finalizers ?? []).includes(f);
}

/** Being deleted in the foreground: the object waits for its blocking dependents. */
export function isDeletingDependents(o: KubeObjectLike): boolean {
  return !!o.metadata?.deletionTimestamp && hasFinalizer(o, FOREGROUND_FINALIZER);
}

/** The references of `dependent` to `ownerUid`. */
function refsTo(dependent: KubeObjectLike, ownerUid: string): OwnerReference[] {
  return (dependent.metadata?.ownerReferences ?? []).filter((r) => r.uid === ownerUid);
}

/**
 * What to do with an object being deleted, or `undefined` when its own owners decide (an object
 * not being deleted). `dependents` are the cached objects that reference it.
 */
export function decideDeleting(item: KubeObjectLike, dependents: readonly KubeObjectLike[]): GcAction | undefined {
  if (!item.metadata?.deletionTimestamp) return undefined;
  const uid = item.metadata.uid ?? '';
  if (hasFinalizer(item, ORPHAN_FINALIZER)) return { kind: 'orphanDependents', dependents };
  if (hasFinalizer(item, FOREGROUND_FINALIZER)) {
    const blocking = dependents.filter((d) => refsTo(d, uid).some((r) => r.blockOwnerDeletion === true));
    return blocking.length ? { kind: 'waitForDependents', blocking } : { kind: 'removeForegroundFinalizer' };
  }
  // Being deleted for another reason (other finalizers, graceful deletion): not the collector's business.
  return NONE;
}

/**
 * What to do with a live object given the states of its owners (one per ownerReference uid) and
 * its dependents.
 */
export function decideOwned(
  item: KubeObjectLike,
  owners: ReadonlyMap<string, OwnerState>,
  dependents: readonly KubeObjectLike[],
): GcAction {
  const refs = item.metadata?.ownerReferences ?? [];
  if (!refs.length) return NONE;
  const state = (r: OwnerReference): OwnerState => owners.get(r.uid) ?? 'solid';
  const invalid = refs.filter((r) => state(r) === 'invalidScope');
  if (invalid.length) return { kind: 'invalidOwnerScope', refs: invalid };
  const solid = refs.filter((r) => state(r) === 'solid');
  const dangling = refs.filter((r) => state(r) === 'dangling');
  const waiting = refs.filter((r) => state(r) === 'waiting');
  if (solid.length) {
    if (!dangling.length && !waiting.length) return NONE;
    // References to waiting owners go too, or they would block those owners' deletion.
    return { kind: 'removeOwnerReferences', uids: [...dangling, ...waiting].map((r) => r.uid) };
  }
  if (waiting.length && dependents.length) {
    // Deleted in the foreground so its own dependents go first; a dependent that is itself
    // waiting hints at a cycle, which non-blocking references break.
    return { kind: 'delete', policy: 'Foreground', unblock: dependents.some(isDeletingDependents) };
  }
  const policy: PropagationPolicy = hasFinalizer(item, ORPHAN_FINALIZER)
    ? 'Orphan'
    : hasFinalizer(item, FOREGROUND_FINALIZER)
      ? 'Foreground'
      : 'Background';
  return { kind: 'delete', policy, unblock: false };
}

/** The ownerReferences left after removing those to `uids` (undefined when none is left). */
export function withoutOwners(o: KubeObjectLike, uids: readonly string[]): OwnerReference[] | undefined {
  const left = (o.metadata?.ownerReferences ?? []).filter((r) => !uids.includes(r.uid));
  return left.length ? left : undefined;
}

/** The ownerReferences with blockOwnerDeletion cleared (upstream's unblockOwnerReferences). */
export function unblocked(o: KubeObjectLike): OwnerReference[] {
  return (o.metadata?.ownerReferences ?? []).map((r) =>
    r.blockOwnerDeletion ? { ...r, blockOwnerDeletion: false } : r,
  );
}
