/**
 * The node agent's volume manager (kubelet pkg/kubelet/volumemanager): wiring only.
 *
 * - populator (populator/): pods on this node → desired state (DSW). Writes the DSW.
 * - reconciler (reconciler/): pure decision over DSW × ASW → operations, run by the operation
 *   executor (util/executor.ts); operations (operations/) write the actual state (ASW).
 * - every effect (operations, pod status and volumesInUse writes, the orphan sweep) goes through
 *   that one executor: one at a time per key, backoff after a failure.
 * - reconstruct/: rebuilds the ASW from disk and the mount table at start; removes orphaned pod dirs.
 * - podstatus/: pods whose volumes are all mounted become Running; deleted pods are finally deleted.
 */
import { childAbortController } from '../../util/abort.js';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { newEventRecorder, type EventRecorder } from '../../client/events.js';
import { informerFor, runInformers, type Informer } from '../../client/informer.js';
import type { RestClient } from '../../client/rest.js';
import { DEFAULT_BACKOFF, realClock, type Clock } from '../../util/backoff.js';
import { newOperationExecutor, type OperationExecutor } from '../../util/executor.js';
import { newLoop } from '../../util/loop.js';
import { newLogger, type Logger } from '../../util/log.js';
import type { MetricsRegistry } from '../../util/metrics.js';
import { newActualStateOfWorld, type ActualStateOfWorld } from './cache/actual-state.js';
import { newDesiredStateOfWorld, type DesiredStateOfWorld } from './cache/desired-state.js';
import { CsiClients, DriverNotRegisteredError, type CsiDriverLookup } from './operations/csi-clients.js';
import type { OperationContext } from './operations/context.js';
import { generate, pluginLabel } from './operations/generator.js';
import { PriorityLimiter } from './operations/limiter.js';
import { newPopulator, type Populator } from './populator/populator.js';
import { VolumesInUseReporter } from './populator/volumes-in-use.js';
import { PodStatusWriter } from './podstatus/writer.js';
import { cleanupOrphanedPodDirs } from './reconstruct/orphans.js';
import { reconstructActualState } from './reconstruct/reconstruct.js';
import { reconcile } from './reconciler/reconcile.js';
import { informerObjects, nodeScopedObjects, type VolumeObjects } from './objects.js';
import type { PodUid } from './types.js';

export type { CsiDriverLookup } from './operations/csi-clients.js';
export { HOST_PATHS_ANNOTATION } from './podstatus/decide.js';

export interface VolumeManagerOptions {
  readonly client: RestClient;
  readonly nodeName: string;
  /** The node's InternalIP address, written as each pod's status.hostIP (as the kubelet does). */
  readonly hostIP?: string;
  /** The kubelet root dir equivalent (pods/ and plugins/ live under it). */
  readonly rootDir: string;
  readonly drivers: CsiDriverLookup;
  readonly signal: AbortSignal;
  readonly metrics?: MetricsRegistry;
  /** Cap of the per-operation exponential backoff (500 ms doubling); default DEFAULT_BACKOFF.capMs. */
  readonly backoffCapMs?: number;
  /** Driver stage/publish/teardown calls in flight at once (publish first); default 4 (measured best of 2/4/8 with B3 on 2 cores). */
  readonly maxConcurrentCalls?: number;
  /** Reconciler/populator period as a safety net besides event wake-ups (kubelet: 100 ms). */
  readonly periodMs?: number;
  readonly log?: Logger;
  readonly clock?: Clock;
  /** No container runtime on this node: pods marked Running get a Warning event saying their containers do not run. */
  readonly volumeOnly?: boolean;
  /**
   * The credential is a node's (Node authorizer): read claims, volumes, secrets, configmaps and
   * VolumeAttachments one by one with GET instead of cluster-wide informers.
   */
  readonly nodeScopedReads?: boolean;
  /**
   * A container runtime runs the pods: it writes their status, and a pod's volumes stay until it
   * says the pod's sandbox and containers have stopped.
   */
  readonly runtimeActive?: (uid: string) => boolean;
}

export interface VolumeManager {
  readonly dsw: Pick<DesiredStateOfWorld, 'volumesToMount' | 'volumeNames' | 'volumesForPod' | 'pods'>;
  readonly asw: Pick<ActualStateOfWorld, 'attachedVolumes' | 'mountedPods' | 'mountedVolumesForPod'>;
  /** True once the populator has completed a full pass with synced informers. */
  populatedOnce(): boolean;
  /** Resolves when no operation, status write or node write is in flight (at that instant). */
  idle(): Promise<void>;
  /** Stops the loops, aborts operations in flight and waits for them; mounts are left as they are. */
  stop(): Promise<void>;
}

const ORPHAN_SWEEP_MS = 2_000;
/** The executor key of the orphaned pod directory sweep; not a volume name. */
const ORPHAN_SWEEP_KEY = 'orphaned-pod-dirs';
const POPULATE_RESYNC_MS = 1_000;
// Full passes over every pod (populator, pod status) run at most this often under a stream of
// events — the kubelet's populator period. Per-event passes would cost O(pods²) on a busy node.
const FULL_PASS_MIN_INTERVAL_MS = 100;

/** Starts the volume manager; resolves once its state is reconstructed and its loop runs. */
export async function startVolumeManager(o: VolumeManagerOptions): Promise<VolumeManager> {
  const log = o.log ?? newLogger('volumemanager');
  const clock = o.clock ?? realClock;
  const stopCtl = childAbortController(o.signal);
  const signal = stopCtl.signal;

  const dsw = newDesiredStateOfWorld();
  const asw = newActualStateOfWorld();
  const recorder: EventRecorder = newEventRecorder({ client: o.client, component: 'kubelet', host: o.nodeName });
  const csi = new CsiClients(o.drivers, log.child('csi'), o.metrics);

  const pods = informerFor(o.client, 'Pod', { fieldSelector: `spec.nodeName=${o.nodeName}` });
  // Object changes re-run the populator (set below, once the loop exists).
  let objectsChanged = (): void => {};
  const objects: VolumeObjects = o.nodeScopedReads
    ? nodeScopedObjects({
        client: o.client,
        clock,
        onChange: () => objectsChanged(),
        signal,
        log: log.child('objects'),
      })
    : informerObjects(o.client);
  const informers: Array<Informer<unknown>> = [pods as Informer<unknown>, ...objects.informers];

  const backoff = { ...DEFAULT_BACKOFF, capMs: o.backoffCapMs ?? DEFAULT_BACKOFF.capMs };
  const exec: OperationExecutor = newOperationExecutor({
    backoff,
    clock,
    log: log.child('executor'),
    expected: (e) => e instanceof DriverNotRegisteredError, // CsiClients says it once per driver
  });

  const durations = o.metrics?.histogram('storage_operation_duration_seconds', 'Storage operation duration', [
    'operation_name',
    'volume_plugin',
    'status',
  ]);
  const total = o.metrics?.gauge('volume_manager_total_volumes', 'Number of volumes in Volume Manager', [
    'plugin_name',
    'state',
  ]);
  if (total) {
    total.collect = (g) => {
      g.reset();
      const count = (state: string, specs: ReadonlyArray<{ spec: Parameters<typeof pluginLabel>[0] }>): void => {
        const by = new Map<string, number>();
        for (const s of specs) by.set(pluginLabel(s.spec), (by.get(pluginLabel(s.spec)) ?? 0) + 1);
        for (const [plugin_name, n] of by) g.set({ plugin_name, state }, n);
      };
      count('desired_state_of_world', dsw.volumesToMount());
      count('actual_state_of_world', asw.mountedPods());
    };
  }

  const ctx: OperationContext = {
    rootDir: o.rootDir,
    nodeName: o.nodeName,
    asw,
    csi,
    limiter: new PriorityLimiter(o.maxConcurrentCalls ?? 4),
    api: { csiDriver: (n) => objects.lookups.csiDriver(n), volumeAttachment: (n) => objects.volumeAttachment(n) },
    client: o.client,
    recorder,
    log,
  };
  const populator: Populator = newPopulator({
    dsw,
    asw,
    pods: () => pods.lister.list() as Pod[],
    lookups: objects.lookups,
    recorder,
    clock,
    problemBackoff: backoff,
    synced: () => informers.every((i) => i.hasSynced()) && objects.synced(),
    lookupsAnswered: () => objects.synced(),
    ...(o.runtimeActive ? { runtimeActive: o.runtimeActive } : {}),
  });
  const inUse = new VolumesInUseReporter(o.client, o.nodeName, exec);
  const status = new PodStatusWriter(
    o.client,
    exec,
    o.hostIP,
    o.volumeOnly ? { recorder, nodeName: o.nodeName } : undefined,
    o.runtimeActive,
  );

  const reconstructed = await reconstructActualState({ rootDir: o.rootDir, asw, log });
  if (reconstructed > 0) log.info('actual state reconstructed from disk', { volumes: reconstructed });

  let lastSweep = 0;
  const sweep = (): void => {
    if (!populator.hasPopulatedOnce() || clock.now() - lastSweep < ORPHAN_SWEEP_MS) return;
    const live = new Set(pods.lister.list().map((p) => p.metadata?.uid ?? ''));
    const keep = (uid: PodUid): boolean =>
      live.has(uid) || dsw.podExists(uid) || asw.mountedVolumesForPod(uid).length > 0;
    if (
      exec.run(ORPHAN_SWEEP_KEY, 'cleanup_orphaned_pod_dirs', async () => {
        const removed = await cleanupOrphanedPodDirs({ rootDir: o.rootDir, keep, log });
        if (removed.length) log.info('orphaned pod directories removed', { pods: removed.join(',') });
      }) === 'started'
    )
      lastSweep = clock.now();
  };

  // Object changes re-run the populator; operation and write completions only the reconciler.
  let populateDue = true;
  let lastPopulate = -Infinity;
  let lastStatusSync = -Infinity; // skipped passes are caught up by the periodic pass (periodMs)
  const iterate = (): void => {
    // Besides object changes, a full pass at least every POPULATE_RESYNC_MS retries unresolved volumes.
    const now = clock.now();
    if ((populateDue && now - lastPopulate >= FULL_PASS_MIN_INTERVAL_MS) || now - lastPopulate >= POPULATE_RESYNC_MS) {
      populateDue = false;
      lastPopulate = clock.now();
      populator.populate();
      objects.passDone();
    }
    inUse.sync(dsw);
    const adopted = (pod: PodUid, outer: string): boolean => populator.wantedUnresolved(pod, outer);
    for (const op of reconcile(dsw, asw, populator.hasPopulatedOnce(), adopted)) {
      if (op.kind === 'markDetached') {
        // A cache update, not an effect; never while an operation on the volume runs (the kubelet's
        // IsOperationPending check): a NodeStage in flight would otherwise report to a forgotten volume.
        if (!exec.isPending({ volume: op.volume })) asw.markVolumeDetached(op.volume);
        continue;
      }
      const g = generate(ctx, op, durations);
      exec.run(g.key, g.name, g.run); // alreadyRunning / backingOff are expected: the next pass retries
    }
    if (now - lastStatusSync >= FULL_PASS_MIN_INTERVAL_MS) {
      lastStatusSync = now;
      status.sync(pods.lister.list() as Pod[], asw, dsw);
    }
    sweep();
  };

  const loop = newLoop({ name: 'volume manager pass', body: iterate, periodMs: o.periodMs ?? 100, clock, log });
  objectsChanged = (): void => {
    populateDue = true;
    loop.trigger();
  };
  for (const inf of informers)
    inf.addEventHandler({ onAdd: objectsChanged, onUpdate: objectsChanged, onDelete: objectsChanged });
  exec.onChange(loop.trigger);

  const runs = runInformers(signal, informers, log);
  const looping = loop.run(signal);

  let stopped: Promise<void> | undefined;
  return {
    dsw,
    asw,
    populatedOnce: () => populator.hasPopulatedOnce(),
    idle: () => exec.idle(),
    stop: () =>
      (stopped ??= (async () => {
        stopCtl.abort();
        await looping;
        await exec.close();
        await Promise.all(runs);
        await recorder.close();
        csi.close();
      })()),
  };
}
