/**
 * kube's ControllerExpectations: after creating or deleting pods a controller waits until its
 * informer has seen them before it counts pods again, so a lagging cache never makes it create (or
 * delete) twice. Expectations expire after kube's five minutes in case a watch event was lost.
 */

/** kube's ExpectationsTimeout. */
export const EXPECTATIONS_TIMEOUT_MS = 5 * 60 * 1000;

interface Pending {
  adds: number;
  deletes: Set<string>;
  at: number;
}

export interface Expectations {
  /** Records what a sync is about to do: `adds` creations and the deletion of the pods keyed `deletes`. */
  expect(owner: string, adds: number, deletes: readonly string[], nowMs: number): void;
  creationObserved(owner: string): void;
  /** A pod's deletion (or its deletionTimestamp) was seen. */
  deletionObserved(owner: string, pod: string): void;
  /** A creation that failed will never be observed. */
  creationFailed(owner: string): void;
  /** Whether the owner may count its pods again (nothing pending, or expired). */
  satisfied(owner: string, nowMs: number): boolean;
  forget(owner: string): void;
}

export function newExpectations(): Expectations {
  const byOwner = new Map<string, Pending>();
  const settle = (owner: string): void => {
    const p = byOwner.get(owner);
    if (p && p.adds <= 0 && p.deletes.size === 0) byOwner.delete(owner);
  };
  return {
    expect(owner, adds, deletes, nowMs) {
      byOwner.set(owner, { adds, deletes: new Set(deletes), at: nowMs });
      settle(owner);
    },
    creationObserved(owner) {
      const p = byOwner.get(owner);
      if (p) p.adds--;
      settle(owner);
    },
    creationFailed(owner) {
      const p = byOwner.get(owner);
      if (p) p.adds--;
      settle(owner);
    },
    deletionObserved(owner, pod) {
      byOwner.get(owner)?.deletes.delete(pod);
      settle(owner);
    },
    satisfied(owner, nowMs) {
      const p = byOwner.get(owner);
      return !p || nowMs - p.at > EXPECTATIONS_TIMEOUT_MS;
    },
    forget(owner) {
      byOwner.delete(owner);
    },
  };
}
