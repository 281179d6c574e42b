import { lstat, mkdir, unlink } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { newLogger, type Logger } from '../../util/log.js';
import { csiServices } from '../proto/index.js';
import type { ControllerHandlers, NodeHandlers } from '../proto/types.js';
import { controllerGetCapabilities, controllerModifyVolume } from './controller/capabilities.js';
import { createVolume } from './controller/create-volume.js';
import { deleteVolume } from './controller/delete-volume.js';
import { controllerExpandVolume } from './controller/expand-volume.js';
import { getCapacity } from './controller/get-capacity.js';
import { controllerGetVolume, listVolumes } from './controller/get-volume.js';
import { controllerPublishVolume, controllerUnpublishVolume } from './controller/publish.js';
import { createSnapshot, deleteSnapshot, listSnapshots } from './controller/snapshots.js';
import { validateVolumeCapabilities } from './controller/validate-capabilities.js';
import { DEFAULT_DRIVER_NAME, HostpathDriver, unary, type HostpathConfig } from './driver.js';
import { identityHandlers } from './identity.js';
import { nodeExpandVolume } from './node/expand.js';
import { nodeGetCapabilities, nodeGetInfo } from './node/info.js';
import { nodePublishVolume, nodeUnpublishVolume } from './node/publish.js';
import { nodeStageVolume, nodeUnstageVolume } from './node/stage.js';
import { nodeGetVolumeStats } from './node/stats.js';
import { recover } from './recover.js';

export interface HostpathDriverOptions {
  /** `unix:///abs/path.sock`, `unix:/abs/path.sock` or a bare path. */
  endpoint: string;
  nodeId: string;
  stateDir: string;
  driverName?: string;
  enableAttach?: boolean;
  maxVolumesPerNode?: number;
  capacityBytes?: number;
  /** See HostpathConfig. */
  sharedStorage?: boolean;
  volumesFrom?: string;
  signal: AbortSignal;
  logger?: Logger;
}

export interface RunningHostpathDriver {
  /** Absolute path of the listening unix socket. */
  readonly socketPath: string;
  readonly driver: HostpathDriver;
  /** Resolves once the server has stopped (after `signal` aborts) and the socket is removed. */
  readonly done: Promise<void>;
}

/** The Controller service: one plain function per RPC over the driver state. */
function controllerHandlers(d: HostpathDriver): ControllerHandlers {
  const { log } = d;
  return {
    CreateVolume: unary(log, 'CreateVolume', (req) => createVolume(d, req)),
    DeleteVolume: unary(log, 'DeleteVolume', (req) => deleteVolume(d, req)),
    ControllerPublishVolume: unary(log, 'ControllerPublishVolume', (req) => controllerPublishVolume(d, req)),
    ControllerUnpublishVolume: unary(log, 'ControllerUnpublishVolume', (req) => controllerUnpublishVolume(d, req)),
    ValidateVolumeCapabilities: unary(log, 'ValidateVolumeCapabilities', (req) => validateVolumeCapabilities(d, req)),
    ListVolumes: unary(log, 'ListVolumes', (req) => listVolumes(d, req)),
    GetCapacity: unary(log, 'GetCapacity', (req) => getCapacity(d, req)),
    ControllerGetCapabilities: unary(log, 'ControllerGetCapabilities', () => controllerGetCapabilities(d)),
    CreateSnapshot: unary(log, 'CreateSnapshot', (req) => createSnapshot(d, req)),
    DeleteSnapshot: unary(log, 'DeleteSnapshot', (req) => deleteSnapshot(d, req)),
    ListSnapshots: unary(log, 'ListSnapshots', (req) => listSnapshots(d, req)),
    ControllerExpandVolume: unary(log, 'ControllerExpandVolume', (req) => controllerExpandVolume(d, req)),
    ControllerGetVolume: unary(log, 'ControllerGetVolume', (req) => controllerGetVolume(d, req)),
    ControllerModifyVolume: unary(log, 'ControllerModifyVolume', () => controllerModifyVolume()),
  };
}

/** The Node service: one plain function per RPC over the driver state. */
function nodeHandlers(d: HostpathDriver): NodeHandlers {
  const { log } = d;
  return {
    NodeStageVolume: unary(log, 'NodeStageVolume', (req) => nodeStageVolume(d, req)),
    NodeUnstageVolume: unary(log, 'NodeUnstageVolume', (req) => nodeUnstageVolume(d, req)),
    NodePublishVolume: unary(log, 'NodePublishVolume', (req) => nodePublishVolume(d, req)),
    NodeUnpublishVolume: unary(log, 'NodeUnpublishVolume', (req) => nodeUnpublishVolume(d, req)),
    NodeGetVolumeStats: unary(log, 'NodeGetVolumeStats', (req) => nodeGetVolumeStats(d, req)),
    NodeExpandVolume: unary(log, 'NodeExpandVolume', (req) => nodeExpandVolume(d, req)),
    NodeGetCapabilities: unary(log, 'NodeGetCapabilities', () => nodeGetCapabilities()),
    NodeGetInfo: unary(log, 'NodeGetInfo', () => nodeGetInfo(d)),
  };
}

/** Grace period for in-flight RPCs at shutdown; a mount normally completes well inside it. */
const SHUTDOWN_GRACE_MS = 5_000;

/** The socket path of a CSI endpoint; only unix sockets are supported. */
export function parseEndpoint(endpoint: string): string {
  let p = endpoint;
  if (p.startsWith('unix://')) p = p.slice('unix://'.length);
  else if (p.startsWith('unix:')) p = p.slice('unix:'.length);
  else if (/^[a-z][a-z0-9+.-]*:/i.test(p)) throw new Error(`unsupported endpoint ${endpoint}: only unix sockets`);
  if (p === '') throw new Error(`endpoint ${endpoint} names no socket path`);
  return path.resolve(p);
}

/** True when something accepts connections on the unix socket `p`. */
function socketIsLive(p: string): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = net.createConnection(p);
    const done = (live: boolean): void => {
      sock.destroy();
      resolve(live);
    };
    sock.once('connect', () => done(true));
    sock.once('error', () => done(false));
  });
}

/**
 * Removes a socket file left by a driver that died. Refuses to replace a live socket (another
 * driver is serving there) or anything that is not a socket.
 */
async function removeStaleSocket(p: string): Promise<void> {
  try {
    const st = await lstat(p);
    if (!st.isSocket()) throw new Error(`${p} exists and is not a socket; refusing to replace it`);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw e;
  }
  if (await socketIsLive(p)) throw new Error(`${p} is in use by a running server; refusing to replace it`);
  await unlink(p).catch((e: NodeJS.ErrnoException) => {
    if (e.code !== 'ENOENT') throw e;
  });
}

function validateOptions(o: HostpathDriverOptions): HostpathConfig {
  if (!o.nodeId) throw new Error('hostpath driver: nodeId is required');
  if (!o.stateDir) throw new Error('hostpath driver: stateDir is required');
  const max = o.maxVolumesPerNode ?? 0;
  if (!Number.isSafeInteger(max) || max < 0)
    throw new Error(`hostpath driver: maxVolumesPerNode must be a non-negative integer, got ${max}`);
  if (o.capacityBytes !== undefined && (!Number.isSafeInteger(o.capacityBytes) || o.capacityBytes <= 0)) {
    throw new Error(`hostpath driver: capacityBytes must be a positive integer, got ${o.capacityBytes}`);
  }
  return {
    driverName: o.driverName ?? DEFAULT_DRIVER_NAME,
    nodeId: o.nodeId,
    stateDir: path.resolve(o.stateDir),
    enableAttach: o.enableAttach ?? false,
    maxVolumesPerNode: max,
    capacityBytes: o.capacityBytes,
    ...(o.sharedStorage ? { sharedStorage: true } : {}),
    ...(o.volumesFrom !== undefined ? { volumesFrom: path.resolve(o.volumesFrom) } : {}),
  };
}

/**
 * Starts the hostpath CSI driver: loads its state, removes a stale socket, settles what a crash
 * left (recover.ts), serves Identity,
 * Controller and Node on the unix socket. Resolves once listening; stop with `signal`.
 */
export async function startHostpathDriver(o: HostpathDriverOptions): Promise<RunningHostpathDriver> {
  const config = validateOptions(o);
  const log = o.logger ?? newLogger('csi-hostpath');
  const socketPath = parseEndpoint(o.endpoint);
  const driver = await HostpathDriver.open(config, log);

  const server = new grpc.Server();
  const services = csiServices();
  server.addService(services.identity, identityHandlers(driver));
  server.addService(services.controller, controllerHandlers(driver));
  server.addService(services.node, nodeHandlers(driver));

  await mkdir(path.dirname(socketPath), { recursive: true });
  await removeStaleSocket(socketPath);
  // After the socket check (a live driver there owns this state) and before serving.
  await recover(driver);
  await new Promise<void>((resolve, reject) => {
    server.bindAsync(`unix:${socketPath}`, grpc.ServerCredentials.createInsecure(), (err) =>
      err ? reject(err) : resolve(),
    );
  });
  log.info('listening', {
    socket: socketPath,
    driver: config.driverName,
    node: config.nodeId,
    attach: config.enableAttach,
  });

  const done = new Promise<void>((resolve) => {
    const stop = (): void => {
      const timer = setTimeout(() => server.forceShutdown(), SHUTDOWN_GRACE_MS);
      server.tryShutdown(() => {
        clearTimeout(timer);
        unlink(socketPath)
          .catch(() => undefined)
          .then(() => driver.store.save())
          .catch((e: unknown) => log.error('saving state at shutdown failed', { error: String(e) }))
          .finally(() => {
            log.info('stopped', { socket: socketPath });
            resolve();
          });
      });
    };
    if (o.signal.aborted) stop();
    else o.signal.addEventListener('abort', stop, { once: true });
  });
  return { socketPath, driver, done };
}

/** Runs the hostpath CSI driver until `signal` aborts. */
export async function runHostpathDriver(o: HostpathDriverOptions): Promise<void> {
  const running = await startHostpathDriver(o);
  await running.done;
}
