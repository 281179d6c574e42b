/**
 * kube's ControllerRefManager (ClaimPods / ClaimReplicaSets) as a pure function: which objects a
 * controller owns, which orphans its selector matches it adopts, and which it releases because its
 * selector no longer matches them. Used by the ReplicaSet (pods) and Deployment (ReplicaSets) controllers.
 */
import type { OwnerReference } from 'kubernetes-types/meta/v1.js';
import { labelSelectorFromObject, matchesLabels, NOTHING, type LabelSelector, type LabelSelectorObject } from '../api/selectors.js';
import { controllerRefOf } from '../kube/workloads.js';
import { NotFoundError } from '../util/errors.js';

interface Claimable {
  readonly metadata?: {
    readonly namespace?: string;
    readonly uid?: string;
    readonly labels?: Record<string, string>;
    readonly deletionTimestamp?: string;
    readonly ownerReferences?: OwnerReference[];
  };
}

/** A workload's spec.selector; an invalid one selects nothing (validation refused it already). */
export function selectorOf(o: { spec?: { selector?: LabelSelectorObject } }): LabelSelector {
  try {
    return labelSelectorFromObject(o.spec?.selector, { nil: 'nothing' });
  } catch {
    return NOTHING;
  }
}

export interface Claimed<T> {
  readonly owned: T[];
  readonly adopt: T[];
  readonly release: T[];
}

/** The objects of `owner`'s namespace it controls after adoption and release. A deleted owner adopts and releases nothing. */
export function claim<T extends Claimable>(owner: Claimable & { spec?: { selector?: LabelSelectorObject } }, candidates: readonly T[]): Claimed<T> {
  const sel = selectorOf(owner);
  const uid = owner.metadata?.uid;
  const deleting = !!owner.metadata?.deletionTimestamp;
  const out: Claimed<T> = { owned: [], adopt: [], release: [] };
  for (const o of candidates) {
    if (o.metadata?.namespace !== owner.metadata?.namespace) continue;
    const ref = controllerRefOf(o);
    const matches = matchesLabels(sel, o.metadata?.labels);
    if (ref) {
      if (ref.uid !== uid) continue; // another controller's
      if (matches || deleting) out.owned.push(o);
      else out.release.push(o);
      continue;
    }
    if (!matches || deleting || o.metadata?.deletionTimestamp) continue;
    out.adopt.push(o);
    out.owned.push(o);
  }
  return out;
}

/** Strategic-merge patches that adopt (add the controller reference) or release (remove it), with the object's UID as precondition. */
export function adoptPatch(o: Claimable, ref: OwnerReference): object {
  return { metadata: { ownerReferences: [ref], uid: o.metadata?.uid } };
}
export function releasePatch(o: Claimable, ownerUid: string | undefined): object {
  return { metadata: { ownerReferences: [{ $patch: 'delete', uid: ownerUid }], uid: o.metadata?.uid } };
}

/** Awaits a write whose object may be gone meanwhile (deleted: nothing left to do). */
export async function ignoreNotFound(p: Promise<unknown>): Promise<void> {
  try {
    await p;
  } catch (e) {
    if (!(e instanceof NotFoundError)) throw e;
  }
}
