import { CsiClient } from '../../../csi/client.js';
import { DEFAULT_BACKOFF, realClock, type Clock } from '../../../util/backoff.js';
import { InvalidError, toStowageError } from '../../../util/errors.js';
import { newLogger, type Logger } from '../../../util/log.js';
import type { RegisteredPlugin } from '../cache/types.js';
import { PluginRefusedError } from '../errors.js';
import type { PluginHandler, PluginRegistration } from '../handler.js';
import type { NodeInfoManager } from './nodeinfo.js';
import { newCsiDriverRegistry, type CsiDriverRegistry, type MutableCsiDriverRegistry } from './registry.js';
import { retryWithBackoff } from './retry.js';
import { compareVersions, highestSupportedV1, parseVersion } from './versions.js';

// The kubelet allows NodeGetInfo 2 min; a driver that needs more than 30 s to say who it is on
// this node is stuck, and the executor retries it with backoff anyway.
export const DEFAULT_NODE_GET_INFO_TIMEOUT_MS = 30_000;
// Cleanup after a driver left: retried this many times (500 ms doubling) before giving up loudly.
const UNINSTALL_ATTEMPTS = 6;

/** The CSIPlugin handler, with the driver registry and a live CSI client per registered driver. */
export interface CsiPluginHandler extends PluginHandler {
  readonly registry: CsiDriverRegistry;
  /**
   * Removes from the API the drivers it lists for this node that are not registered now (their
   * sockets went away while the agent was down). Call once the first registrations have settled.
   */
  pruneStale(signal: AbortSignal): Promise<string[]>;
  /** CSI clients of the registered drivers (for health checks); a fresh array. */
  clients(): Array<{ name: string; client: CsiClient }>;
  close(): void;
}

export interface CsiPluginHandlerOptions {
  readonly nodeInfo: NodeInfoManager;
  readonly registry?: MutableCsiDriverRegistry;
  readonly nodeGetInfoTimeoutMs?: number;
  readonly clock?: Clock;
  readonly log?: Logger;
}

export function newCsiPluginHandler(o: CsiPluginHandlerOptions): CsiPluginHandler {
  const registry = o.registry ?? newCsiDriverRegistry();
  const log = o.log ?? newLogger('pluginmanager/csi');
  const clock = o.clock ?? realClock;
  const timeoutMs = o.nodeGetInfoTimeoutMs ?? DEFAULT_NODE_GET_INFO_TIMEOUT_MS;
  const live = new Map<string, CsiClient>();

  const validatePlugin = (p: PluginRegistration): void => {
    const v = highestSupportedV1(p.versions);
    if (!v) {
      throw new PluginRefusedError(
        `CSI driver ${p.name} supports none of the CSI versions this node speaks (1.x); it offered [${p.versions.join(', ')}]`,
      );
    }
    const existing = registry.getDriver(p.name);
    if (existing && existing.socketPath !== p.socketPath) {
      const ev = parseVersion(existing.highestSupportedVersion);
      // The kubelet keeps the registration with the higher version; an equal one from a second
      // socket would make the endpoint ambiguous, so the first one stays.
      if (ev && compareVersions(v, ev) <= 0) {
        throw new PluginRefusedError(
          `CSI driver ${p.name} is already registered from ${existing.socketPath} with version ${existing.highestSupportedVersion}, not lower than ${v.text}`,
        );
      }
    }
  };

  const registerPlugin = async (p: PluginRegistration, signal: AbortSignal): Promise<void> => {
    const v = highestSupportedV1(p.versions);
    if (!v) throw new PluginRefusedError(`CSI driver ${p.name}: no 1.x version`);
    const previous = registry.set({
      name: p.name,
      endpoint: p.endpoint,
      highestSupportedVersion: v.text,
      socketPath: p.socketPath,
    });
    const csi = new CsiClient({ endpoint: p.endpoint, log, caller: 'kubelet', driverName: p.name });
    try {
      const info = await csi.nodeGetInfo({ timeoutMs, signal });
      if (info.nodeId === '') throw new InvalidError(`CSI driver ${p.name}: NodeGetInfo returned an empty node_id`);
      await o.nodeInfo.installDriver(
        {
          driver: p.name,
          nodeId: info.nodeId,
          topology: info.accessibleTopology?.segments ?? {},
          maxVolumesPerNode: info.maxVolumesPerNode,
        },
        signal,
      );
    } catch (e) {
      registry.restore(p.name, previous);
      csi.close();
      throw e;
    }
    const old = live.get(p.name);
    live.set(p.name, csi);
    old?.close();
  };

  const deregisterPlugin = async (p: RegisteredPlugin, signal: AbortSignal): Promise<void> => {
    if (!registry.removeFrom(p.name, p.socketPath)) {
      log.info('CSI driver is registered from another socket; keeping it', { driver: p.name, socket: p.socketPath });
      return;
    }
    live.get(p.name)?.close();
    live.delete(p.name);
    try {
      await retryWithBackoff(() => o.nodeInfo.uninstallDriver(p.name, signal), {
        attempts: UNINSTALL_ATTEMPTS,
        policy: DEFAULT_BACKOFF,
        clock,
        signal,
      });
    } catch (e) {
      if (signal.aborted) return;
      log.error('could not remove the CSI driver from the Node and CSINode', {
        driver: p.name,
        error: toStowageError(e).message,
      });
    }
  };

  const pruneStale = async (signal: AbortSignal): Promise<string[]> => {
    const stale = (await o.nodeInfo.installedDrivers(signal)).filter((name) => !registry.getDriver(name));
    for (const name of stale) {
      // Checked again right before: a driver may have registered while we were reading.
      if (registry.getDriver(name)) continue;
      log.info('removing a CSI driver that is no longer registered on this node', { driver: name });
      await o.nodeInfo.uninstallDriver(name, signal);
    }
    return stale;
  };

  return {
    registry,
    pruneStale,
    validatePlugin,
    registerPlugin,
    deregisterPlugin,
    clients: () => [...live].map(([name, client]) => ({ name, client })),
    close: () => {
      for (const c of live.values()) c.close();
      live.clear();
    },
  };
}
