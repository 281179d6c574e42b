import type { Pod } from 'kubernetes-types/core/v1.js';
import { metaTime } from '../../../util/metatime.js';
import type { RestClient } from '../../../client/rest.js';
import { NotFoundError, ConflictError } from '../../../util/errors.js';
import type { Logger } from '../../../util/log.js';
import type { ActualStateOfWorld } from '../cache/actual-state.js';
import type { DesiredStateOfWorld } from '../cache/desired-state.js';
import { podUid } from '../types.js';
import { decidePod, HOST_PATHS_ANNOTATION } from './decide.js';

/** Writes what decidePod asks for, at most one write in flight per pod, each at most once per pod version. */
export class PodStatusWriter {
  private readonly inflight = new Set<string>();
  /** uid → resourceVersion the last successful write was decided on. */
  private readonly doneAt = new Map<string, string>();
  private readonly writes = new Set<Promise<void>>();

  constructor(
    private readonly client: RestClient,
    private readonly log: Logger,
    private readonly onWritten: () => void,
  ) {}

  sync(pods: readonly Pod[], asw: ActualStateOfWorld, dsw: DesiredStateOfWorld): void {
    const now = metaTime();
    for (const pod of pods) {
      const uid = pod.metadata?.uid ?? '';
      const rv = pod.metadata?.resourceVersion ?? '';
      if (this.inflight.has(uid) || this.doneAt.get(uid) === rv) continue;
      const u = podUid(uid);
      const action = decidePod(pod, asw.mountedVolumesForPod(u), dsw.volumesForPod(u).length, now);
      if (action.kind === 'none') continue;
      this.inflight.add(uid);
      const p = this.write(pod, action)
        .then(() => void this.doneAt.set(uid, rv))
        .catch((e: unknown) => {
          if (!(e instanceof ConflictError || e instanceof NotFoundError)) this.log.warn('pod status write failed', { pod: `${pod.metadata?.namespace}/${pod.metadata?.name}`, error: String(e) });
        })
        .finally(() => {
          this.inflight.delete(uid);
          this.writes.delete(p);
          this.onWritten();
        });
      this.writes.add(p);
    }
    const live = new Set(pods.map((p) => p.metadata?.uid ?? ''));
    for (const uid of [...this.doneAt.keys()]) if (!live.has(uid)) this.doneAt.delete(uid);
  }

  private async write(pod: Pod, action: Exclude<ReturnType<typeof decidePod>, { kind: 'none' }>): Promise<void> {
    const pods = this.client.resource('Pod');
    const name = pod.metadata?.name ?? '';
    const namespace = pod.metadata?.namespace;
    if (action.kind === 'delete') {
      // The kubelet's final delete: the volumes are gone, nothing is left to wait for.
      await pods.delete(name, { namespace, gracePeriodSeconds: 0, preconditions: { uid: pod.metadata?.uid } });
      return;
    }
    // One write: pods/status keeps the metadata it is sent (as Kubernetes' pod status strategy does).
    const patch: Record<string, unknown> = {};
    if (action.annotation !== undefined) patch['metadata'] = { annotations: { [HOST_PATHS_ANNOTATION]: action.annotation } };
    if (action.status) patch['status'] = action.status;
    await pods.patchStatus(name, 'merge', patch, { namespace });
  }

  async idle(): Promise<void> {
    while (this.writes.size > 0) await Promise.all([...this.writes]);
  }
}
