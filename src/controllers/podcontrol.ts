/**
 * kube's RealPodControl deletions for the workload controllers that own pods directly (ReplicaSet,
 * DaemonSet): a batch deleted at once, each with the owner's event (`Deleted pod: <name>` /
 * `Error deleting: <error>`) and, once the API took it, an expectation that the cache will show
 * it gone. A pod already gone counts as deleted; the first failure is rethrown after the batch.
 */
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { EventRecorder, KubeObjectLike, ResourceClient } from '../client/index.js';
import { NotFoundError, toStowageError } from '../util/errors.js';
import type { Expectations } from './expectations.js';

export async function deleteOwnedPods(o: {
  readonly owner: KubeObjectLike;
  /** The owner's queue key, its expectations' key. */
  readonly key: string;
  readonly victims: readonly Pod[];
  readonly api: ResourceClient<Pod>;
  readonly recorder: EventRecorder;
  readonly expectations: Expectations;
}): Promise<void> {
  const results = await Promise.allSettled(
    o.victims.map((p) =>
      o.api.delete(p.metadata?.name ?? '', {
        namespace: p.metadata?.namespace,
        preconditions: { uid: p.metadata?.uid },
      }),
    ),
  );
  let firstError: unknown;
  results.forEach((r, i) => {
    const p = o.victims[i];
    if (!p) return;
    if (r.status === 'fulfilled' || r.reason instanceof NotFoundError) {
      if (r.status === 'fulfilled') o.expectations.expect(o.key, { deleted: [p.metadata?.uid ?? ''] }, Date.now());
      o.recorder.event(o.owner, 'Normal', 'SuccessfulDelete', `Deleted pod: ${p.metadata?.name ?? ''}`);
    } else {
      o.recorder.event(o.owner, 'Warning', 'FailedDelete', `Error deleting: ${toStowageError(r.reason).message}`);
      firstError ??= r.reason;
    }
  });
  if (firstError !== undefined) throw firstError;
}
