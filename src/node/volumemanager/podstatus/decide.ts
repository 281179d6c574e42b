import type { Pod, PodCondition } from 'kubernetes-types/core/v1.js';
import type { MountedPod } from '../cache/actual-state.js';

/** Pod annotation listing each mounted volume's host path, `{ "<volume name>": "<host path>" }` (docs/volumes-on-host.md). */
export const HOST_PATHS_ANNOTATION = 'volumes.stowage.io/host-paths';

export const READY_CONDITIONS = ['PodScheduled', 'Initialized', 'ContainersReady', 'Ready'] as const;

export type PodAction =
  | { readonly kind: 'none' }
  /** Write the annotation (metadata) and/or the status; either may be absent when already right. */
  | { readonly kind: 'running'; readonly annotation?: string; readonly status?: Record<string, unknown> }
  /** Scheduled but volumes not all mounted: containers waiting in ContainerCreating (kubectl's STATUS). */
  | { readonly kind: 'creating'; readonly status: Record<string, unknown> }
  /** Every volume is torn down: the node's final delete (grace period 0). */
  | { readonly kind: 'delete' };

function hostPaths(mounted: readonly MountedPod[]): string {
  const o: Record<string, string> = {};
  for (const m of [...mounted].sort((a, b) => a.outerSpecName.localeCompare(b.outerSpecName)))
    o[m.outerSpecName] = m.hostPath;
  return JSON.stringify(o);
}

/** status.hostIP and hostIPs as the kubelet writes them: the node's address; none when it has none. */
function hostIPFields(hostIP: string | undefined): Record<string, unknown> {
  return hostIP ? { hostIP, hostIPs: [{ ip: hostIP }] } : {};
}

/**
 * What pod status to write. A pod whose every volume is Mounted becomes Running with the
 * conditions kubectl shows as ready (Stowage runs no containers: mounted volumes are the whole
 * start), on the node's address (`hostIP`). A terminating pod is deleted once the node holds no
 * volume of it. Pure.
 */
export function decidePod(
  pod: Pod,
  mounted: readonly MountedPod[],
  desiredCount: number,
  nowIso: string,
  hostIP?: string,
): PodAction {
  if (pod.metadata?.deletionTimestamp)
    return mounted.length === 0 && desiredCount === 0 ? { kind: 'delete' } : { kind: 'none' };
  const phase = pod.status?.phase;
  if (phase === 'Succeeded' || phase === 'Failed') return { kind: 'none' };
  const names = (pod.spec?.volumes ?? []).map((v) => v.name);
  const ok = names.every((n) => mounted.some((m) => m.outerSpecName === n && m.state === 'Mounted'));
  if (!ok) return phase === 'Running' || !waitedLong(pod, nowIso) ? { kind: 'none' } : creating(pod, nowIso, hostIP);
  const annotation = hostPaths(mounted.filter((m) => names.includes(m.outerSpecName)));
  const wantAnnotation = pod.metadata?.annotations?.[HOST_PATHS_ANNOTATION] !== annotation ? annotation : undefined;
  const conds = pod.status?.conditions ?? [];
  const ready =
    phase === 'Running' &&
    READY_CONDITIONS.every((t) => conds.some((c) => c.type === t && c.status === 'True')) &&
    (hostIP === undefined || pod.status?.hostIP === hostIP);
  if (ready && wantAnnotation === undefined) return { kind: 'none' };
  if (ready) return { kind: 'running', annotation };
  const conditions: PodCondition[] = READY_CONDITIONS.map((type) => {
    const prev = conds.find((c) => c.type === type && c.status === 'True');
    return { type, status: 'True', lastTransitionTime: prev?.lastTransitionTime ?? nowIso };
  });
  const containerStatuses = (pod.spec?.containers ?? []).map((c) => ({
    name: c.name,
    image: c.image ?? '',
    imageID: '',
    ready: true,
    started: true,
    restartCount: 0,
    state: { running: { startedAt: pod.status?.startTime ?? nowIso } },
  }));
  return {
    kind: 'running',
    ...(wantAnnotation !== undefined ? { annotation } : {}),
    status: {
      phase: 'Running',
      ...hostIPFields(hostIP),
      conditions,
      containerStatuses,
      startTime: pod.status?.startTime ?? nowIso,
    },
  };
}

const CREATING = 'ContainerCreating';
/**
 * A pod is shown ContainerCreating once it has waited this long for its volumes: most pods are
 * Running sooner, and one status write less per pod keeps pod start fast (measured with B3).
 */
export const CREATING_AFTER_MS = 2_000;

function waitedLong(pod: Pod, nowIso: string): boolean {
  const created = Date.parse(pod.metadata?.creationTimestamp ?? '');
  return Number.isNaN(created) || Date.parse(nowIso) - created >= CREATING_AFTER_MS;
}

/**
 * The kubelet's status of a pod whose volumes are not mounted yet: Pending, PodScheduled and
 * Initialized true, not ready, each container waiting with reason ContainerCreating. Written once.
 */
function creating(pod: Pod, nowIso: string, hostIP: string | undefined): PodAction {
  const containers = pod.spec?.containers ?? [];
  const statuses = pod.status?.containerStatuses ?? [];
  const written = (pod.status?.conditions ?? []).some((c) => c.type === 'Initialized' && c.status === 'True');
  if (
    written &&
    containers.every((c) => statuses.some((s) => s.name === c.name && s.state?.waiting?.reason === CREATING))
  )
    return { kind: 'none' };
  const names = containers.map((c) => c.name).join(' ');
  const prev = (type: string, status: string): string =>
    pod.status?.conditions?.find((c) => c.type === type && c.status === status)?.lastTransitionTime ?? nowIso;
  const notReady = {
    status: 'False',
    reason: 'ContainersNotReady',
    message: `containers with unready status: [${names}]`,
  };
  return {
    kind: 'creating',
    status: {
      phase: 'Pending',
      ...hostIPFields(hostIP),
      conditions: [
        { type: 'PodScheduled', status: 'True', lastTransitionTime: prev('PodScheduled', 'True') },
        { type: 'Initialized', status: 'True', lastTransitionTime: prev('Initialized', 'True') },
        { type: 'ContainersReady', ...notReady, lastTransitionTime: prev('ContainersReady', 'False') },
        { type: 'Ready', ...notReady, lastTransitionTime: prev('Ready', 'False') },
      ],
      containerStatuses: containers.map((c) => ({
        name: c.name,
        image: c.image ?? '',
        imageID: '',
        ready: false,
        started: false,
        restartCount: 0,
        state: { waiting: { reason: CREATING } },
      })),
      startTime: pod.status?.startTime ?? nowIso,
    },
  };
}
