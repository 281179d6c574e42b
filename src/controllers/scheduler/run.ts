/**
 * Runtime of Stowage's scheduler: informers enqueue pod keys, one worker runs scheduling cycles
 * (serially, as kube-scheduler does, so that each decision sees the previous one's assumptions),
 * and the volume PreBind wait is level-triggered: a pod whose claims are still binding is
 * requeued by claim events (and a timer) instead of holding a worker.
 */
import type { PodCondition } from 'kubernetes-types/core/v1.js';
import { newBoundedRunner } from './background.js';
import {
  KINDS,
  newController,
  newEventRecorder,
  objectPath,
  objectOf,
  referenceTo,
  splitKey,
  watch,
  type RestClient,
} from '../../client/index.js';
import { realClock, type Clock } from '../../util/backoff.js';
import { ConflictError, toStowageError } from '../../util/errors.js';
import { newLogger } from '../../util/log.js';
import type { MetricsRegistry } from '../../util/metrics.js';
import { POD_CLAIM_INDEX, newControllerInformers, type ControllerInformers } from '../informers.js';
import { SchedulerCache } from './cache.js';
import { schedulePod } from './schedule.js';
import { volumeBindingState } from './prebind.js';
import { isPodToSchedule, nodeSchedulingChanged, nowIso, preboundVolume, withScheduledCondition } from './policy.js';
import {
  ANN_SELECTED_NODE,
  DEFAULT_SCHEDULER_NAME,
  isTerminal,
  podKey,
  type PersistentVolume,
  type PersistentVolumeClaim,
  type Pod,
} from './types.js';
import { nameOf } from '../../kube/meta.js';

const log = newLogger('scheduler');
const BINDING_CONCURRENCY = 32; // API writes of binding cycles in flight; half the in-process client's sockets

export interface SchedulerOptions {
  readonly client: RestClient;
  readonly signal: AbortSignal;
  /** Pods with this spec.schedulerName (or none) are ours. */
  readonly schedulerName?: string;
  /** How long PreBind waits for the PV controller / provisioner to bind claims (kube's bindTimeoutSeconds: 600). */
  readonly bindTimeoutMs?: number;
  /** Periodic retry of unschedulable pods on top of event-triggered retries (kube flushes after 5 min; we retry sooner). */
  readonly retryMs?: number;
  readonly clock?: Clock;
  /** Informers shared with other controllers; default: own ones. */
  readonly informers?: ControllerInformers;
  readonly metrics?: MetricsRegistry;
}

/** Runs the scheduler until `signal` aborts. */
export async function runScheduler(o: SchedulerOptions): Promise<void> {
  const { client } = o;
  const schedulerName = o.schedulerName ?? DEFAULT_SCHEDULER_NAME;
  const bindTimeoutMs = o.bindTimeoutMs ?? 600_000;
  const retryMs = o.retryMs ?? 30_000;
  const clock = o.clock ?? realClock;
  const inf = o.informers ?? newControllerInformers(client);
  const { pods, nodes, pvs: volumes, pvcs: claims, classes, csiNodes, csiDrivers, capacities } = inf;
  const cache = new SchedulerCache({
    pods: pods.lister,
    nodes: nodes.lister,
    volumes: volumes.lister,
    claims: claims.lister,
    classes: classes.lister,
    csiNodes: csiNodes.lister,
    csiDrivers: csiDrivers.lister,
    capacities: capacities.lister,
  });
  const recorder = newEventRecorder({ client, component: schedulerName });
  const unschedulable = new Set<string>();
  const podApi = client.resource('Pod');
  const pvApi = client.resource('PersistentVolume');
  const pvcApi = client.resource('PersistentVolumeClaim');

  const retryUnschedulable = (): void => {
    for (const k of unschedulable) scheduler.add(k);
  };
  const onPod = (p: Pod): void => {
    const key = podKey(p);
    if (isPodToSchedule(p, schedulerName)) {
      scheduler.add(key);
      return;
    }
    unschedulable.delete(key);
    const a = cache.assumedPod(key);
    if (a && (p.spec?.nodeName || p.metadata?.uid !== a.pod.metadata?.uid)) cache.forget(key);
    if (isTerminal(p)) retryUnschedulable(); // a finished pod frees volume slots and ReadWriteOncePod claims
  };
  const podEvents = watch(pods, () => ({
    onAdd: onPod,
    onUpdate: (_, p) => onPod(p),
    onDelete: (x) => {
      const key = podKey(objectOf(x));
      unschedulable.delete(key);
      cache.forget(key);
      retryUnschedulable();
    },
  }));
  const onCluster = { onAdd: retryUnschedulable, onUpdate: retryUnschedulable, onDelete: retryUnschedulable };
  const clusterEvents = [
    watch(classes, () => onCluster),
    watch(csiNodes, () => onCluster),
    watch(csiDrivers, () => onCluster),
    watch(capacities, () => onCluster),
  ];
  // Heartbeats rewrite node status every few seconds; only changes that can make a pod fit count (kube's queueing hints).
  const nodeEvents = watch(nodes, () => ({
    onAdd: retryUnschedulable,
    onDelete: retryUnschedulable,
    onUpdate: (a, b) => (nodeSchedulingChanged(a, b) ? retryUnschedulable() : undefined),
  }));
  const onVolume = (v: PersistentVolume): void => {
    cache.observeVolume(volumes.lister.get(nameOf(v)), nameOf(v));
    retryUnschedulable();
  };
  const volumeEvents = watch(volumes, () => ({
    onAdd: onVolume,
    onUpdate: (_, v) => onVolume(v),
    onDelete: (x) => onVolume(objectOf(x)),
  }));
  // A claim event wakes the pods waiting on that claim only: with many pods in PreBind at once
  // (a burst of WaitForFirstConsumer claims), waking all of them on every claim write is quadratic.
  const onClaim = (c: PersistentVolumeClaim): void => {
    for (const p of pods.byIndex(POD_CLAIM_INDEX, `${c.metadata?.namespace ?? ''}/${nameOf(c)}`)) {
      const key = podKey(p);
      if (cache.assumedPod(key)?.phase === 'waitingVolumes') scheduler.add(key);
    }
    retryUnschedulable();
  };
  const claimEvents = watch(claims, () => ({
    onAdd: onClaim,
    onUpdate: (_, c) => onClaim(c),
    onDelete: (x) => onClaim(objectOf(x)),
  }));

  const setCondition = async (p: Pod, c: Pick<PodCondition, 'status' | 'reason' | 'message'>): Promise<void> => {
    const conds = withScheduledCondition(p, c, nowIso(clock));
    if (!conds) return;
    // Strategic merge on conditions (merge key "type"): touches PodScheduled only, no resourceVersion race.
    const cond = conds.find((x) => x.type === 'PodScheduled');
    // Fields the new condition lacks are deleted explicitly: a strategic merge would keep the old ones.
    const patch = { reason: null, message: null, ...cond };
    await podApi.patchStatus(
      nameOf(p),
      'strategic',
      { status: { conditions: [patch] } },
      { namespace: p.metadata?.namespace },
    );
  };

  const stillAssumed = (key: string, p: Pod): boolean => cache.assumedPod(key)?.pod.metadata?.uid === p.metadata?.uid;

  const bindPod = async (p: Pod, node: string): Promise<void> => {
    const ns = p.metadata?.namespace ?? '';
    const name = nameOf(p);
    const binding = {
      apiVersion: 'v1',
      kind: 'Binding',
      metadata: { name, namespace: ns, uid: p.metadata?.uid },
      target: { apiVersion: 'v1', kind: 'Node', name: node },
    };
    try {
      await client.http.json({ method: 'POST', path: objectPath(KINDS.Pod, name, ns, 'binding'), body: binding });
    } catch (e) {
      if (!(e instanceof ConflictError)) throw e; // already assigned: someone (maybe our earlier attempt) bound it
      return;
    }
    if (stillAssumed(podKey(p), p)) cache.assume(p, node, 'bound', 0);
    recorder.event(referenceTo(p, 'Pod'), 'Normal', 'Scheduled', `Successfully assigned ${ns}/${name} to ${node}`);
    // Kubernetes' binding endpoint flips PodScheduled to True; ours only sets nodeName, so a pod we
    // earlier marked Unschedulable is corrected here.
    const cur = p.status?.conditions?.find((c) => c.type === 'PodScheduled');
    if (cur && cur.status !== 'True') await setCondition(p, { status: 'True' });
  };

  /** The API half of BindPodVolumes: write the pre-bound PVs, hand the rest to provisioning. */
  const writeVolumes = async (
    node: string,
    prebound: readonly PersistentVolume[],
    provisions: readonly PersistentVolumeClaim[],
  ): Promise<Record<string, number>> => {
    const written: Record<string, number> = {};
    for (const pv of prebound) cache.assumeVolume(await pvApi.update(pv));
    for (const claim of provisions) {
      if (claim.metadata?.annotations?.[ANN_SELECTED_NODE] === node) continue;
      const next = structuredClone(claim);
      next.metadata = {
        ...(next.metadata ?? {}),
        annotations: { ...(next.metadata?.annotations ?? {}), [ANN_SELECTED_NODE]: node },
      };
      const stored = await pvcApi.update(next);
      written[`${claim.metadata?.namespace}/${nameOf(claim)}`] = Number(stored.metadata?.resourceVersion ?? 0);
    }
    return written;
  };

  // The binding cycle runs beside the scheduling cycle (as kube's does in a goroutine): the serial
  // worker only decides and assumes; API writes proceed concurrently, bounded.
  const binder = newBoundedRunner(BINDING_CONCURRENCY);
  const inBackground = (key: string, work: () => Promise<void>, undo: () => void): Promise<void> =>
    binder.run(() =>
      work().catch((e: unknown) => {
        undo();
        cache.forget(key);
        log.warn('binding cycle failed; pod requeued', { pod: key, error: toStowageError(e).message });
        scheduler.addRateLimited(key);
      }),
    );

  /** Reason Unschedulable for a fit error, SchedulerError for anything else (e.g. PreBind timing out), as kube. */
  const fail = async (
    p: Pod,
    message: string,
    reason: 'Unschedulable' | 'SchedulerError' = 'Unschedulable',
  ): Promise<void> => {
    recorder.event(referenceTo(p, 'Pod'), 'Warning', 'FailedScheduling', message);
    await setCondition(p, { status: 'False', reason, message });
  };

  const reconcile = async (key: string): Promise<{ requeueAfterMs?: number } | void> => {
    const { namespace, name } = splitKey(key);
    const pod = pods.lister.get(namespace ?? '', name);
    if (!pod || !isPodToSchedule(pod, schedulerName)) {
      unschedulable.delete(key);
      return;
    }
    const assumed = cache.assumedPod(key);
    if (assumed && assumed.pod.metadata?.uid !== pod.metadata?.uid) cache.forget(key);
    else if (assumed?.phase === 'bound' || assumed?.phase === 'binding')
      return; // the binding cycle requeues when it is done
    else if (assumed) {
      const st = volumeBindingState(pod, assumed.node, cache.view(), assumed.claimVersions);
      if (st.kind === 'bound') {
        const node = assumed.node;
        cache.assume(pod, node, 'binding', assumed.deadline);
        await inBackground(
          key,
          () => bindPod(pod, node),
          () => undefined,
        );
        return;
      }
      if (st.kind === 'waiting') {
        const left = assumed.deadline - clock.now();
        if (left > 0) return { requeueAfterMs: Math.min(left, retryMs) };
        cache.forget(key);
        unschedulable.add(key);
        await fail(
          pod,
          `running PreBind plugin "VolumeBinding": binding volumes: timed out waiting for the condition`,
          'SchedulerError',
        );
        return { requeueAfterMs: retryMs };
      }
      // The claim lost its pre-binding or selected node (e.g. the provisioner asked to reschedule): start over.
      log.info('volume binding undone; rescheduling', { pod: key, reason: st.reason });
      cache.forget(key);
    }
    const d = schedulePod(pod, cache.view());
    if (d.kind === 'unschedulable') {
      unschedulable.add(key);
      await fail(pod, d.message);
      return { requeueAfterMs: retryMs };
    }
    unschedulable.delete(key);
    // Assume before writing, so that the next cycle already sees this pod on the node and its PVs taken.
    const { node, volumes: v } = d;
    const prebound = v.staticBindings.map((b) => preboundVolume(b.volume, b.claim));
    for (const pv of prebound) cache.assumeVolume(pv);
    const deadline = clock.now() + bindTimeoutMs;
    cache.assume(pod, node, 'binding', deadline);
    await inBackground(
      key,
      async () => {
        if (prebound.length === 0 && v.provisions.length === 0) return bindPod(pod, node);
        const written = await writeVolumes(node, prebound, v.provisions);
        if (!stillAssumed(key, pod)) return; // deleted meanwhile: nothing to wait for
        cache.assume(pod, node, 'waitingVolumes', deadline, written);
        scheduler.add(key); // the claims may have bound already
      },
      () => {
        for (const pv of prebound) cache.forgetVolume(nameOf(pv));
      },
    );
  };

  // One worker: each cycle must see the assumptions of the one before (kube schedules one pod at a time).
  const scheduler = newController<string>({
    name: 'scheduler',
    metrics: o.metrics,
    log,
    sources: [podEvents, ...clusterEvents, nodeEvents, volumeEvents, claimEvents],
    reconcile,
  });
  try {
    await scheduler.run(o.signal);
  } finally {
    await binder.idle();
    await recorder.close();
  }
}
