/**
 * The PV controller's runtime: informers for volumes, claims, classes, nodes and pods feed two
 * work queues (volumes by name, claims by `ns/name`) served by several workers each; the queue
 * never hands one key to two workers. Writes go through the REST client; Events through the
 * recorder (PV events land in `default`, as upstream). Resync every 15 s is the safety net.
 */
import { rm } from 'node:fs/promises';
import { mountsUnder } from '../../mount/mountinfo.js';
import {
  every,
  newController,
  newEventRecorder,
  objectOf,
  reads,
  watch,
  type EventRecorder,
  type RestClient,
} from '../../client/index.js';
import { POD_CLAIM_INDEX, PV_CLAIM_INDEX, newControllerInformers, type ControllerInformers } from '../informers.js';
import { newOperationExecutor } from '../../util/executor.js';
import { newLogger } from '../../util/log.js';
import type { MetricsRegistry } from '../../util/metrics.js';
import { newPvControllerCache } from './cache.js';
import type { SyncContext } from './context.js';
import { handleClaimKey, handleVolumeKey, resync, type Requeue } from './controller.js';
import { renderCollectorMetrics } from './metrics.js';
import {
  DEFAULT_OPTIONS,
  claimKey,
  type ControllerOptions,
  type Effects,
  type Listers,
  type PersistentVolumeClaim,
} from './types.js';
import { splitNamespacedKey } from '../../kube/keys.js';

const log = newLogger('pv-controller');

/** Kubernetes' PV controller resync period. */
export const PV_RESYNC_MS = 15_000;

export interface PvControllerRunOptions {
  readonly client: RestClient;
  /** Informers shared with other controllers; default: own ones. */
  readonly informers?: ControllerInformers;
  readonly signal: AbortSignal;
  readonly workers?: number;
  readonly options?: Partial<ControllerOptions>;
  readonly metrics?: MetricsRegistry;
  readonly recorder?: EventRecorder;
  readonly resyncMs?: number;
}

/** Runs the PV controller until `signal` aborts. Resolves once it has stopped. */
export async function runPvController(o: PvControllerRunOptions): Promise<void> {
  const { client, signal } = o;
  const workers = o.workers ?? 32;
  const inf = o.informers ?? newControllerInformers(client);
  const { pvs, pvcs, classes, nodes, pods } = inf;
  const recorder = o.recorder ?? newEventRecorder({ client, component: 'persistentvolume-controller' });
  const ops = newOperationExecutor({ log: log.child('operations') });
  // Two queues as upstream ("volumes" by name, "claims" by ns/name); each handler may wake the other.
  const requeue: Requeue = { volume: (n) => volumeController.add(n), claim: (k) => claimController.add(k) };

  const pvApi = client.resource('PersistentVolume');
  const pvcApi = client.resource('PersistentVolumeClaim');
  const fx: Effects = {
    updateVolume: (v) => pvApi.update(v),
    updateVolumeStatus: (v) => pvApi.updateStatus(v),
    deleteVolume: async (name, uid) => {
      await pvApi.delete(name, uid ? { preconditions: { uid } } : {});
    },
    updateClaim: (c) => pvcApi.update(c, { namespace: c.metadata?.namespace }),
    updateClaimStatus: (c) => pvcApi.updateStatus(c, { namespace: c.metadata?.namespace }),
    liveVolume: (name) => pvApi.get(name),
    liveClaim: (namespace, name) => pvcApi.get(name, { namespace }),
    event: (e) => recorder.event(e.object, e.type, e.reason, e.message),
    enqueueClaim: (key, afterMs) => (afterMs ? claimController.addAfter(key, afterMs) : claimController.add(key)),
    scheduleOperation: (name, op) => {
      ops.run(name, name, async () => {
        const t0 = performance.now();
        await op();
        // Operation names are "<operation>-<volume>" upstream; keep the operation part as the label.
        opDuration?.observe(
          { plugin_name: '', operation_name: name.split('-')[0] ?? name },
          (performance.now() - t0) / 1000,
        );
      });
    },
    // The in-tree hostPath deleter removes the directory on the controller's host (only /tmp/...),
    // but never across a mount point: a volume still mounted somewhere below is an error, not data loss.
    removeHostPathData: async (path) => {
      const mounted = await mountsUnder(path).catch(() => []);
      if (mounted.length > 0)
        throw new Error(`refusing to delete ${path}: ${mounted[0]!.mountPoint} is mounted inside it`);
      await rm(path, { recursive: true, force: true });
    },
  };
  const listers: Listers = {
    claim: (ns, name) => pvcs.lister.get(ns, name),
    storageClass: (name) => classes.lister.get(name),
    storageClasses: () => classes.lister.list(),
    node: (name) => nodes.lister.get(name),
    podsForClaim: (ns, name) => pods.byIndex(POD_CLAIM_INDEX, `${ns}/${name}`),
    volumesPreboundTo: (ns, name) => pvs.byIndex(PV_CLAIM_INDEX, `${ns}/${name}`),
  };
  const ctx: SyncContext = {
    cache: newPvControllerCache(),
    listers,
    fx,
    options: { ...DEFAULT_OPTIONS, ...o.options },
  };

  const removeCollector = o.metrics?.collector(() => renderCollectorMetrics(pvs.lister.list(), pvcs.lister.list()));
  const opDuration = o.metrics?.histogram(
    'volume_operation_total_seconds',
    'Storage operation end to end duration in seconds',
    ['plugin_name', 'operation_name'],
  );
  const resyncMs = o.resyncMs ?? PV_RESYNC_MS;
  const common = { workers, metrics: o.metrics, log };
  const volumeController = newController<string>({
    ...common,
    name: 'volumes',
    sources: [
      watch(pvs, (q) => ({
        onAdd: (v) => q.add(v.metadata!.name!),
        onUpdate: (_, v) => q.add(v.metadata!.name!),
        onDelete: (v) => q.add(objectOf(v).metadata!.name!),
      })),
      reads(pvcs, classes, nodes, pods),
      every(resyncMs, () => resync(requeue, pvcs.lister.list(), pvs.lister.list())),
    ],
    reconcile: (name) => handleVolumeKey(ctx, requeue, name, pvs.lister.get(name)),
  });
  const claimController = newController<string>({
    ...common,
    name: 'claims',
    sources: [
      watch(pvcs, (q) => ({
        onAdd: (c) => q.add(claimKey(c)),
        onUpdate: (_, c) => q.add(claimKey(c)),
        onDelete: (c) => q.add(claimKey(objectOf(c))),
      })),
      // A new or changed default class may bind (or provision) waiting class-less claims.
      watch(classes, (q) => ({
        onAdd: () =>
          pvcs.lister.list().forEach((c: PersistentVolumeClaim) => c.status?.phase === 'Pending' && q.add(claimKey(c))),
      })),
      reads(pvs, nodes, pods),
    ],
    reconcile: async (key) => {
      const [ns, name] = splitNamespacedKey(key);
      await handleClaimKey(ctx, requeue, key, pvcs.lister.get(ns, name));
    },
  });

  try {
    await Promise.all([volumeController.run(signal), claimController.run(signal)]);
  } finally {
    await ops.close();
    removeCollector?.();
    await recorder.flush();
  }
}
