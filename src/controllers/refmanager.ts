/**
 * Adoption and release (pkg/controller ControllerRefManager): a controller owns the objects whose
 * controller reference names it. An orphan its selector matches is adopted (unless either is being
 * deleted); an object it owns that its selector no longer matches is released. Objects another
 * controller owns are never touched. Pure.
 */
import type { OwnerReference } from 'kubernetes-types/meta/v1.js';
import { labelSelectorFromObject, matchesLabels, type LabelSelectorObject } from '../api/selectors.js';

interface Owned {
  readonly metadata?: {
    readonly uid?: string;
    readonly labels?: Readonly<Record<string, string>>;
    readonly deletionTimestamp?: string;
    readonly ownerReferences?: readonly OwnerReference[];
  };
}

export interface RefOwner {
  readonly uid: string;
  readonly selector: LabelSelectorObject | undefined;
  readonly deleting: boolean;
}

export interface RefDecision<T> {
  /** What the owner controls after the changes below. */
  readonly owned: T[];
  readonly adopt: T[];
  readonly release: T[];
}

/** Which of `objects` (candidates, e.g. the pods of the owner's namespace) to adopt, keep and release. */
export function claimObjects<T extends Owned>(owner: RefOwner, objects: readonly T[]): RefDecision<T> {
  let selector: ReturnType<typeof labelSelectorFromObject>;
  try {
    selector = labelSelectorFromObject(owner.selector);
  } catch {
    return { owned: [], adopt: [], release: [] }; // an invalid selector selects nothing
  }
  const out: RefDecision<T> = { owned: [], adopt: [], release: [] };
  for (const o of objects) {
    const ref = (o.metadata?.ownerReferences ?? []).find((r) => r.controller === true);
    const matches = matchesLabels(selector, o.metadata?.labels);
    if (ref) {
      if (ref.uid !== owner.uid) continue;
      if (matches || owner.deleting) out.owned.push(o);
      else out.release.push(o);
    } else if (matches && !owner.deleting && !o.metadata?.deletionTimestamp) {
      out.adopt.push(o);
      out.owned.push(o);
    }
  }
  return out;
}

/** The strategic-merge patch that makes `owner` an object's controller (the object's uid as precondition). */
export function adoptPatch(ref: OwnerReference, uid: string): object {
  return { metadata: { ownerReferences: [{ ...ref, controller: true, blockOwnerDeletion: true }], uid } };
}

/** The strategic-merge patch that removes `ownerUid` from an object's owners. */
export function releasePatch(ownerUid: string, uid: string): object {
  return { metadata: { ownerReferences: [{ $patch: 'delete', uid: ownerUid }], uid } };
}

/**
 * Executes a claim: patches the adopted and released objects through `patch` (a strategic-merge
 * patch of the named object) and returns what the owner controls.
 */
export async function claimAndPatch<T extends Owned & { readonly metadata?: { readonly name?: string } }>(o: {
  readonly owner: RefOwner;
  readonly ref: OwnerReference;
  readonly candidates: readonly T[];
  readonly patch: (name: string, body: object) => Promise<unknown>;
}): Promise<T[]> {
  const d = claimObjects(o.owner, o.candidates);
  for (const x of d.adopt) await o.patch(x.metadata?.name ?? '', adoptPatch(o.ref, x.metadata?.uid ?? ''));
  for (const x of d.release) await o.patch(x.metadata?.name ?? '', releasePatch(o.owner.uid, x.metadata?.uid ?? ''));
  return d.owned;
}

/** The queue key (`namespace/name`) of the `kind` controlling `o`, or undefined when none of that kind does. */
export function controllerKey(o: Owned & { readonly metadata?: { readonly namespace?: string } }, kind: string): string | undefined {
  const ref = (o.metadata?.ownerReferences ?? []).find((r) => r.controller === true && r.kind === kind);
  return ref ? `${o.metadata?.namespace ?? ''}/${ref.name}` : undefined;
}
