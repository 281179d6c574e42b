import type { Pod } from 'kubernetes-types/core/v1.js';
import { metaTime } from '../../../util/metatime.js';
import type { RestClient } from '../../../client/rest.js';
import { NotFoundError } from '../../../util/errors.js';
import type { OperationExecutor } from '../../../util/executor.js';
import type { ActualStateOfWorld } from '../cache/actual-state.js';
import type { DesiredStateOfWorld } from '../cache/desired-state.js';
import { podUid } from '../types.js';
import { decidePod, HOST_PATHS_ANNOTATION } from './decide.js';
import type { EventRecorder } from '../../../client/events.js';
import { podReference } from '../operations/context.js';
import { podRefOf } from '../populator/resolve.js';

/** The Warning event a pod gets on a node without a container runtime. */
export const CONTAINERS_NOT_RUN = 'ContainersNotRun';
export const containersNotRunMessage = (nodeName: string): string =>
  `node ${nodeName} has no container runtime: the pod's volumes are mounted but its containers do not run`;

type PodAction = Exclude<ReturnType<typeof decidePod>, { kind: 'none' }>;

/** The executor key of a pod's status writes; not a volume name (those start with `kubernetes.io/`). */
const statusKey = (uid: string): string => `pod-status/${uid}`;

/**
 * Writes what decidePod asks for through the executor (one write in flight per pod, backoff after
 * a failure), each at most once per pod version.
 */
export class PodStatusWriter {
  /** uid → resourceVersion the last successful write was decided on. */
  private readonly doneAt = new Map<string, string>();

  /**
   * `volumeOnly`: no containers run on this node; each pod marked Running gets a Warning event
   * saying so (never silently).
   */
  constructor(
    private readonly client: RestClient,
    private readonly exec: OperationExecutor,
    private readonly hostIP?: string,
    private readonly volumeOnly?: { readonly recorder: EventRecorder; readonly nodeName: string },
    /**
     * With a container runtime, it writes the pods' status; this writer writes only the host-paths
     * annotation, and the final delete once the runtime no longer runs the pod.
     */
    private readonly runtimeActive?: (uid: string) => boolean,
  ) {}

  sync(pods: readonly Pod[], asw: ActualStateOfWorld, dsw: DesiredStateOfWorld): void {
    const now = metaTime();
    for (const pod of pods) {
      const uid = pod.metadata?.uid ?? '';
      const rv = pod.metadata?.resourceVersion ?? '';
      const key = statusKey(uid);
      if (this.doneAt.get(uid) === rv || this.exec.isPending(key)) continue;
      const u = podUid(uid);
      let action = decidePod(pod, asw.mountedVolumesForPod(u), dsw.volumesForPod(u).length, now, this.hostIP);
      if (action.kind === 'none') continue;
      // With a runtime, the containers' statuses are the pod's: only the annotation is ours to write.
      if (this.runtimeActive && action.kind === 'creating') continue;
      if (this.runtimeActive && action.kind === 'running') {
        if (action.annotation === undefined) continue;
        action = { kind: 'running', annotation: action.annotation };
      }
      if (action.kind === 'delete' && this.runtimeActive?.(uid) === true) continue;
      // alreadyRunning / backingOff: the next pass asks again.
      this.exec.run(key, action.kind === 'delete' ? 'delete_pod' : 'update_pod_status', async () => {
        await this.write(pod, action);
        this.doneAt.set(uid, rv);
      });
    }
    const live = new Set(pods.map((p) => p.metadata?.uid ?? ''));
    for (const uid of [...this.doneAt.keys()]) if (!live.has(uid)) this.doneAt.delete(uid);
  }

  private async write(pod: Pod, action: PodAction): Promise<void> {
    const pods = this.client.resource('Pod');
    const name = pod.metadata?.name ?? '';
    const namespace = pod.metadata?.namespace;
    try {
      if (action.kind === 'delete') {
        // The kubelet's final delete: the volumes are gone, nothing is left to wait for.
        await pods.delete(name, { namespace, gracePeriodSeconds: 0, preconditions: { uid: pod.metadata?.uid } });
        return;
      }
      // One write: pods/status keeps the metadata it is sent (as Kubernetes' pod status strategy does).
      const patch: Record<string, unknown> = {};
      if (action.kind === 'running' && action.annotation !== undefined)
        patch['metadata'] = { annotations: { [HOST_PATHS_ANNOTATION]: action.annotation } };
      if (action.status) patch['status'] = action.status;
      await pods.patchStatus(name, 'merge', patch, { namespace });
      if (action.status && this.volumeOnly) {
        this.volumeOnly.recorder.event(
          podReference(podRefOf(pod)),
          'Warning',
          CONTAINERS_NOT_RUN,
          containersNotRunMessage(this.volumeOnly.nodeName),
        );
      }
    } catch (e) {
      // The pod is gone: nothing left to write, and no reason to keep a backoff for it.
      if (!(e instanceof NotFoundError)) throw e;
    }
  }
}
