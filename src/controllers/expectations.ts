/**
 * The workload controllers' expectations (pkg/controller UIDTrackingControllerExpectations, used by
 * the ReplicaSet, StatefulSet and Job controllers): pods a controller created or deleted that its
 * pod cache has not shown yet. Until they show, a pass would count from a stale cache and create or
 * delete again, so it waits. Judged against the cache itself rather than counted from informer
 * events: a creation that failed is never expected, and a lost event costs no more than the
 * timeout. An expectation older than five minutes (kube's ExpectationsTimeout) is dropped.
 */
import type { Pod } from 'kubernetes-types/core/v1.js';

/** kube's ExpectationsTimeout. */
export const EXPECTATIONS_TIMEOUT_MS = 5 * 60_000;

interface Pending {
  readonly created: Set<string>;
  readonly deleted: Set<string>;
  at: number;
}

export interface Expectations {
  /** Pods created (by name) and deleted (by uid) for `key` just now. */
  expect(key: string, change: { created?: readonly string[]; deleted?: readonly string[] }, now: number): void;
  /** True once the cache `pods` shows every expected change for `key` (which is then forgotten). */
  satisfied(key: string, pods: readonly Pod[], now: number): boolean;
  forget(key: string): void;
}

export function newExpectations(): Expectations {
  const pending = new Map<string, Pending>();
  return {
    expect(key, change, now) {
      const p = pending.get(key) ?? { created: new Set<string>(), deleted: new Set<string>(), at: now };
      for (const n of change.created ?? []) p.created.add(n);
      for (const u of change.deleted ?? []) p.deleted.add(u);
      p.at = now;
      pending.set(key, p);
    },
    satisfied(key, pods, now) {
      const p = pending.get(key);
      if (!p) return true;
      const names = new Set(pods.map((x) => x.metadata?.name ?? ''));
      const live = new Set(pods.filter((x) => !x.metadata?.deletionTimestamp).map((x) => x.metadata?.uid ?? ''));
      const seen = [...p.created].every((n) => names.has(n)) && [...p.deleted].every((u) => !live.has(u));
      if (seen || now - p.at > EXPECTATIONS_TIMEOUT_MS) {
        pending.delete(key);
        return true;
      }
      return false;
    },
    forget(key) {
      pending.delete(key);
    },
  };
}
