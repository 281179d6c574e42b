/**
 * The built-in node-driver-registrar: registers a CSI driver with the kubelet (or Stowage's node
 * agent) through the plugin-registration socket, behaving on the wire like node-driver-registrar
 * v2.7, plus a /healthz that also checks the driver is still answering.
 */
import { mkdir, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Server as HttpServer } from 'node:http';
import * as grpc from '@grpc/grpc-js';
import { CsiClient, CsiError } from '../client.js';
import { registrationService } from '../proto/index.js';
import { newLogger, type Logger } from '../../util/log.js';
import { EmptyDriverNameError, RegistrationRefusedError } from './errors.js';
import { bindPrivateSocket, removeSocket } from './socket.js';
import { registrationHandlers } from './service.js';
import { serveHealthz, type HealthCheck } from './healthz.js';

export interface RegistrarOptions {
  /** The driver's socket as this process sees it (`unix://` optional). */
  readonly csiAddress: string;
  /** The driver's socket as the kubelet sees it; returned verbatim in GetInfo. */
  readonly kubeletRegistrationPath: string;
  /** The kubelet's plugin registry directory (e.g. /var/lib/kubelet/plugins_registry). */
  readonly pluginRegistrationPath: string;
  /** `host:port` for /healthz; none when unset. */
  readonly httpEndpoint?: string;
  /** Deadline for GetPluginInfo and the health checks' driver calls (upstream --timeout, 1 s). */
  readonly timeoutMs?: number;
  /** Abort to stop: the registration socket is removed and the promise resolves. */
  readonly signal: AbortSignal;
  readonly log?: Logger;
  /** Called once the registration socket (and /healthz, if asked) are being served. */
  readonly onReady?: (r: { socketPath: string; driverName: string; httpPort?: number }) => void;
}

export const DEFAULT_REGISTRAR_TIMEOUT_MS = 1_000; // node-driver-registrar --timeout default

/**
 * Runs until `signal` aborts (resolves) or the kubelet refuses the registration (rejects with
 * RegistrationRefusedError). Startup failures (empty driver name, bind errors) reject too.
 */
export async function runRegistrar(o: RegistrarOptions): Promise<void> {
  const log = o.log ?? newLogger('csi-registrar');
  const timeoutMs = o.timeoutMs ?? DEFAULT_REGISTRAR_TIMEOUT_MS;
  const csi = new CsiClient({
    endpoint: o.csiAddress,
    timeouts: { identity: timeoutMs },
    log,
    caller: 'csi-node-driver-registrar',
  });
  const cleanups: Array<() => Promise<void> | void> = [() => csi.close()];
  const cleanup = async (): Promise<void> => {
    for (const c of cleanups.reverse()) {
      try {
        await c();
      } catch (e) {
        log.warn('cleanup step failed', { error: String(e) });
      }
    }
  };

  try {
    log.info('connecting to CSI driver', { address: csi.endpoint });
    try {
      await csi.connect({ signal: o.signal });
    } catch (e) {
      if (o.signal.aborted) return;
      throw e;
    }
    const info = await csi.getPluginInfo({ timeoutMs, signal: o.signal });
    if (info.name === '') throw new EmptyDriverNameError(csi.endpoint);
    const driverName = info.name;
    log.info('CSI driver name', { driver: driverName });

    await mkdir(o.pluginRegistrationPath, { recursive: true });
    const socketPath = join(o.pluginRegistrationPath, `${driverName}-reg.sock`);
    await removeSocket(socketPath); // a stale socket from a previous run blocks bind

    let refuse!: (reason: string) => void;
    const refused = new Promise<never>((_, reject) => {
      refuse = (reason) => reject(new RegistrationRefusedError(reason));
    });
    refused.catch(() => undefined); // observed below; avoid an unhandled rejection on abort

    const server = new grpc.Server();
    server.addService(
      registrationService(),
      registrationHandlers({
        driverName,
        kubeletRegistrationPath: o.kubeletRegistrationPath,
        probeFile: join(dirname(o.kubeletRegistrationPath), 'registration'),
        log,
        onRefused: (reason) => refuse(reason),
      }),
    );
    cleanups.push(() => removeSocket(socketPath));
    // forceShutdown: the refusing NotifyRegistrationStatus is cancelled, never answered (upstream exits).
    cleanups.push(() => server.forceShutdown());
    await bindPrivateSocket(server, socketPath);
    log.info('serving plugin registration', { socket: socketPath });

    let httpPort: number | undefined;
    if (o.httpEndpoint !== undefined) {
      const h = await serveHealthz(o.httpEndpoint, healthCheck(socketPath, csi, timeoutMs));
      httpPort = h.port;
      cleanups.push(() => closeHttp(h.server));
      log.info('serving /healthz', { endpoint: o.httpEndpoint, port: h.port });
    }
    o.onReady?.({ socketPath, driverName, httpPort });

    const aborted = new Promise<void>((resolve) => {
      if (o.signal.aborted) resolve();
      else o.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    await Promise.race([aborted, refused]);
    log.info('stopping; removing registration socket', { socket: socketPath });
  } finally {
    await cleanup();
  }
}

/** Healthy = our socket is in place (the kubelet can find us) and the driver answers Probe. */
export function healthCheck(socketPath: string, csi: CsiClient, timeoutMs: number): HealthCheck {
  return async () => {
    const st = await stat(socketPath).catch(() => undefined);
    if (!st?.isSocket()) return { ok: false, reason: `registration socket ${socketPath} is missing` };
    try {
      if (!(await csi.isReady({ timeoutMs }))) return { ok: false, reason: 'CSI driver reports not ready' };
    } catch (e) {
      if (!(e instanceof CsiError && e.grpcCodeName === 'UNIMPLEMENTED'))
        return { ok: false, reason: `CSI driver not answering: ${String(e instanceof Error ? e.message : e)}` };
      try {
        await csi.getPluginInfo({ timeoutMs });
      } catch (e2) {
        return { ok: false, reason: `CSI driver not answering: ${e2 instanceof Error ? e2.message : String(e2)}` };
      }
    }
    return { ok: true };
  };
}

function closeHttp(s: HttpServer): Promise<void> {
  return new Promise((resolve) => {
    s.close(() => resolve());
    s.closeAllConnections();
  });
}
