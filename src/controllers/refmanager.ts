/**
 * kube's ControllerRefManager (pkg/controller/controller_ref_manager.go) for the workload
 * controllers: ReplicaSet and Job claim pods, StatefulSet pods and ControllerRevisions, Deployment
 * ReplicaSets. An owner keeps what its controller reference names and its selector (and filters)
 * still match; it adopts the orphans of its namespace that match, unless it or the orphan is being
 * deleted; it releases what it owns and no longer matches, unless it is being deleted itself.
 * Objects another controller owns are never touched. `claimObjects` is pure; `claimAndPatch` does
 * the writes.
 */
import type { OwnerReference } from 'kubernetes-types/meta/v1.js';
import {
  labelSelectorFromObject,
  matchesLabels,
  NOTHING,
  type LabelSelector,
  type LabelSelectorObject,
} from '../kube/selectors.js';
import { controllerRefOf } from '../kube/workloads.js';
import { ConflictError, ignoreNotFound } from '../util/errors.js';

interface Claimable {
  readonly metadata?: {
    readonly name?: string;
    readonly namespace?: string;
    readonly uid?: string;
    readonly labels?: Readonly<Record<string, string>>;
    readonly deletionTimestamp?: string;
    readonly ownerReferences?: readonly OwnerReference[];
  };
}

/** A workload: its spec.selector chooses what it claims. */
export interface ClaimOwner extends Claimable {
  readonly spec?: { readonly selector?: LabelSelectorObject };
}

/** A workload's spec.selector; a nil or invalid one selects nothing (LabelSelectorAsSelector; validation refused an invalid one already). */
export function selectorOf(o: ClaimOwner): LabelSelector {
  try {
    return labelSelectorFromObject(o.spec?.selector, { nil: 'nothing' });
  } catch {
    return NOTHING;
  }
}

export interface Claimed<T> {
  /** What the owner controls once the adoptions and releases below are done. */
  readonly owned: T[];
  readonly adopt: T[];
  readonly release: T[];
}

/**
 * Which of `candidates` `owner` keeps, adopts and releases. `filter` narrows the match beyond the
 * selector (ClaimPods' filters, e.g. a StatefulSet's isMemberOf).
 */
export function claimObjects<T extends Claimable>(
  owner: ClaimOwner,
  candidates: readonly T[],
  filter: (o: T) => boolean = () => true,
): Claimed<T> {
  const sel = selectorOf(owner);
  const uid = owner.metadata?.uid;
  const ownerDeleting = !!owner.metadata?.deletionTimestamp;
  const out: Claimed<T> = { owned: [], adopt: [], release: [] };
  for (const o of candidates) {
    const ref = controllerRefOf(o);
    const matches = matchesLabels(sel, o.metadata?.labels) && filter(o);
    if (ref) {
      if (ref.uid !== uid) continue; // another controller's
      if (matches) out.owned.push(o);
      else if (!ownerDeleting) out.release.push(o);
      continue;
    }
    if (!matches || ownerDeleting || o.metadata?.deletionTimestamp) continue;
    if (o.metadata?.namespace !== owner.metadata?.namespace) continue;
    out.adopt.push(o);
    out.owned.push(o);
  }
  return out;
}

/** The strategic-merge patch that makes `ref`'s owner the object's controller (blocking its foreground deletion), the object's UID as precondition. */
export function adoptPatch(o: Claimable, ref: OwnerReference): object {
  return {
    metadata: { ownerReferences: [{ ...ref, controller: true, blockOwnerDeletion: true }], uid: o.metadata?.uid },
  };
}

/** The strategic-merge patch that removes `ownerUid` from the object's owners, the object's UID as precondition. */
export function releasePatch(o: Claimable, ownerUid: string | undefined): object {
  return { metadata: { ownerReferences: [{ $patch: 'delete', uid: ownerUid }], uid: o.metadata?.uid } };
}

/**
 * Does a claim's writes through `patch` (a strategic-merge patch of the named object) and returns
 * what the owner controls. An object gone meanwhile is neither adopted nor released; a release
 * whose UID precondition fails found a re-created object, which is not ours either.
 */
export async function patchClaimed<T extends Claimable>(
  claimed: Claimed<T>,
  ref: OwnerReference,
  patch: (name: string, body: object) => Promise<unknown>,
): Promise<T[]> {
  const gone = new Set<T>();
  for (const o of claimed.adopt) {
    try {
      await patch(o.metadata?.name ?? '', adoptPatch(o, ref));
    } catch (e) {
      ignoreNotFound(e);
      gone.add(o);
    }
  }
  for (const o of claimed.release) {
    try {
      await patch(o.metadata?.name ?? '', releasePatch(o, ref.uid));
    } catch (e) {
      if (!(e instanceof ConflictError)) ignoreNotFound(e);
    }
  }
  return claimed.owned.filter((o) => !gone.has(o));
}

/** claimObjects, then patchClaimed: what `owner` (whose controller reference is `ref`) controls. */
export async function claimAndPatch<T extends Claimable>(o: {
  readonly owner: ClaimOwner;
  readonly ref: OwnerReference;
  readonly candidates: readonly T[];
  readonly filter?: (o: T) => boolean;
  readonly patch: (name: string, body: object) => Promise<unknown>;
}): Promise<T[]> {
  return patchClaimed(claimObjects(o.owner, o.candidates, o.filter), o.ref, o.patch);
}

/** The queue key (`namespace/name`) of the `kind` controlling `o`, or undefined when none of that kind does. */
export function controllerKey(o: Claimable, kind: string): string | undefined {
  const ref = controllerRefOf(o);
  return ref?.kind === kind ? `${o.metadata?.namespace ?? ''}/${ref.name}` : undefined;
}
