/**
 * The plugin manager: wiring only. Who writes what:
 * - desired state of world: the plugin watcher (sockets on disk);
 * - actual state of world: the register/unregister operations run by the executor;
 * - driver registry, Node annotation/labels, CSINode: the CSI handler, inside those operations;
 * - status annotation and Events: the status reporter, told by the operations and the health monitor.
 */
import type { EventRecorder } from '../../client/events.js';
import type { RestClient } from '../../client/rest.js';
import { DEFAULT_BACKOFF, realClock, type BackoffPolicy, type Clock } from '../../util/backoff.js';
import { toStowageError } from '../../util/errors.js';
import { newLogger, type Logger } from '../../util/log.js';
import { newActualStateOfWorld, type ActualStateOfWorld } from './cache/actual-state.js';
import { newDesiredStateOfWorld, type DesiredStateOfWorld } from './cache/desired-state.js';
import { socketPathOf } from './cache/types.js';
import { newCsiPluginHandler } from './csihandler/handler.js';
import { runHealthMonitor } from './csihandler/health.js';
import { newNodeBatcher, newNodeInfoManager } from './csihandler/nodeinfo.js';
import type { CsiDriverRegistry } from './csihandler/registry.js';
import { newPluginStatusReporter } from './csihandler/reporter.js';
import type { PluginStatus } from './csihandler/status.js';
import { newOperationExecutor, type OperationExecutor } from '../../util/executor.js';
import { newPluginOperations } from './operationexecutor/operations.js';
import { newPluginWatcher } from './pluginwatcher/watcher.js';
import { newReconcilerLoop } from './reconciler/loop.js';

export interface PluginManagerOptions {
  readonly client: RestClient;
  readonly nodeName: string;
  /** The registry directory drivers' registrars put `<name>-reg.sock` in (created if missing). */
  readonly registryDir: string;
  readonly backoff?: BackoffPolicy;
  readonly recorder?: EventRecorder;
  readonly clock?: Clock;
  readonly log?: Logger;
  readonly reconcilePeriodMs?: number;
  readonly healthPeriodMs?: number;
  readonly rescanPeriodMs?: number;
  readonly dialTimeoutMs?: number;
  readonly nodeGetInfoTimeoutMs?: number;
}

export interface PluginManager {
  /** The node's CSI drivers (name → endpoint, version): what the volume manager uses. */
  readonly csiDrivers: CsiDriverRegistry;
  readonly desiredState: Pick<DesiredStateOfWorld, 'pluginsToRegister' | 'isAdded'>;
  readonly actualState: Pick<ActualStateOfWorld, 'registeredPlugins' | 'get' | 'isRegistered'>;
  /** Per-driver registration status, as published on the Node. */
  statuses(): Record<string, PluginStatus>;
  /** Resolves when no operation is pending and the status annotation is written (tests). */
  idle(): Promise<void>;
  /** Stops watching and reconciling; registrations stay in the API (the drivers are still there). */
  stop(): Promise<void>;
}

/** Starts the plugin manager: sockets already in the registry are registered at once. */
export async function startPluginManager(o: PluginManagerOptions): Promise<PluginManager> {
  const log = o.log ?? newLogger('pluginmanager');
  const clock = o.clock ?? realClock;
  const dsw = newDesiredStateOfWorld(clock);
  const asw = newActualStateOfWorld();
  const executor: OperationExecutor = newOperationExecutor({
    backoff: o.backoff ?? DEFAULT_BACKOFF,
    clock,
    log: log.child('executor'),
  });
  // One writer of the Node's metadata for the CSI handler and the status reporter: edits made at
  // the same moment (20 drivers registering) become one update instead of a conflict storm.
  const nodeBatcher = newNodeBatcher(o.client, o.nodeName);
  const reporter = newPluginStatusReporter({
    node: nodeBatcher,
    nodeName: o.nodeName,
    executor,
    recorder: o.recorder,
    clock,
  });
  const csi = newCsiPluginHandler({
    nodeInfo: newNodeInfoManager({ client: o.client, nodeName: o.nodeName, nodeBatcher, log: log.child('nodeinfo') }),
    nodeGetInfoTimeoutMs: o.nodeGetInfoTimeoutMs,
    clock,
    log: log.child('csi'),
  });
  const operations = newPluginOperations({
    asw,
    handlers: { CSIPlugin: csi },
    observer: reporter,
    dialTimeoutMs: o.dialTimeoutMs,
    log: log.child('operations'),
  });
  const loop = newReconcilerLoop({
    dsw,
    asw,
    executor,
    operations,
    clock,
    periodMs: o.reconcilePeriodMs,
    log: log.child('reconciler'),
  });
  const watcher = newPluginWatcher({
    dir: o.registryDir,
    dsw,
    onChange: () => loop.trigger(),
    onRemoved: (p) => reporter.socketRemoved(socketPathOf(p)),
    rescanPeriodMs: o.rescanPeriodMs,
    clock,
    log: log.child('watcher'),
  });

  const stopping = new AbortController();
  reporter.publish();
  await watcher.start();
  const loopDone = loop.run(stopping.signal);
  // Level-triggered at start too: once the sockets found at start have had their first try,
  // drivers the API still lists for this node but nobody registered are removed.
  const pruned = (async () => {
    await loop.settled();
    await executor.idle();
    if (stopping.signal.aborted) return;
    try {
      await csi.pruneStale(stopping.signal);
    } catch (e) {
      if (!stopping.signal.aborted)
        log.warn('could not remove stale CSI drivers from the node', { error: toStowageError(e).message });
    }
  })();
  const healthDone = runHealthMonitor({
    target: csi,
    sink: reporter,
    periodMs: o.healthPeriodMs,
    clock,
    signal: stopping.signal,
  });
  log.info('plugin manager started', { registry: o.registryDir });

  let stopped: Promise<void> | undefined;
  return {
    csiDrivers: csi.registry,
    desiredState: dsw,
    actualState: asw,
    statuses: () => reporter.statuses(),
    idle: async () => {
      await executor.idle();
      await reporter.flush();
    },
    stop: () => {
      stopped ??= (async () => {
        watcher.stop();
        stopping.abort();
        await Promise.allSettled([loopDone, healthDone, pruned]);
        await executor.close();
        await reporter.close();
        csi.close();
      })();
      return stopped;
    },
  };
}
