import { basename } from 'node:path';
import { RegistrationClient } from '../../../csi/client.js';
import { toStowageError } from '../../../util/errors.js';
import { newLogger, type Logger } from '../../../util/log.js';
import type { ActualStateOfWorld } from '../cache/actual-state.js';
import { isPluginType, type DesiredPlugin, type PluginType, type RegisteredPlugin } from '../cache/types.js';
import { PluginRefusedError, PluginUnreachableError } from '../errors.js';
import type { PluginHandler, PluginRegistration, RegistrationObserver } from '../handler.js';
import type { PluginOperations } from '../reconciler/loop.js';

// The kubelet dials registration sockets with a 1 s deadline; a local socket answers in
// microseconds, so anything slower is a stuck plugin.
export const DEFAULT_DIAL_TIMEOUT_MS = 1_000;
// A refused real node-driver-registrar exits before answering; do not wait long for it.
const NOTIFY_TIMEOUT_MS = 1_000;

export interface PluginOperationsOptions {
  readonly asw: ActualStateOfWorld;
  readonly handlers: Partial<Record<PluginType, PluginHandler>>;
  readonly observer?: RegistrationObserver;
  readonly dialTimeoutMs?: number;
  readonly log?: Logger;
}

/** The register and unregister operations of the kubelet's operation generator. */
export function newPluginOperations(o: PluginOperationsOptions): PluginOperations {
  const log = o.log ?? newLogger('pluginmanager/operations');
  const dialTimeoutMs = o.dialTimeoutMs ?? DEFAULT_DIAL_TIMEOUT_MS;

  const notify = async (client: RegistrationClient, ok: boolean, error: string): Promise<void> => {
    try {
      await client.notifyRegistrationStatus({ pluginRegistered: ok, error }, { timeoutMs: NOTIFY_TIMEOUT_MS });
    } catch (e) {
      // node-driver-registrar exits when refused, before answering: UNAVAILABLE is the normal reply.
      if (ok)
        log.warn('plugin did not acknowledge its registration', {
          socket: client.endpoint,
          error: toStowageError(e).message,
        });
      else
        log.debug('refused plugin did not acknowledge', { socket: client.endpoint, error: toStowageError(e).message });
    }
  };

  const register = async (d: DesiredPlugin, signal: AbortSignal): Promise<void> => {
    const client = new RegistrationClient(d.socketPath, dialTimeoutMs);
    let name = guessName(d.socketPath);
    let type: string | undefined;
    const fail = (reason: string, unreachable = false): void =>
      o.observer?.failed({ socketPath: d.socketPath, type, name }, reason, unreachable);
    try {
      let info;
      try {
        info = await client.getInfo({ timeoutMs: dialTimeoutMs, signal });
      } catch (e) {
        const err = new PluginUnreachableError(
          `registration socket ${d.socketPath} is not answering: ${toStowageError(e).message}`,
          { cause: e },
        );
        fail(err.message, true);
        throw err;
      }
      type = info.type;
      const refuse = async (reason: string): Promise<never> => {
        await notify(client, false, reason);
        fail(reason);
        throw new PluginRefusedError(reason);
      };
      if (info.name === '') return await refuse(`plugin at ${d.socketPath} reported an empty name`);
      name = info.name;
      const handler = isPluginType(info.type) ? o.handlers[info.type] : undefined;
      if (!isPluginType(info.type) || !handler)
        return await refuse(`no handler registered for plugin type: ${info.type}`);
      const reg: PluginRegistration = {
        socketPath: d.socketPath,
        type: info.type,
        name: info.name,
        endpoint: info.endpoint === '' ? d.socketPath : info.endpoint,
        versions: info.supportedVersions,
      };
      try {
        handler.validatePlugin(reg);
      } catch (e) {
        return await refuse(toStowageError(e).message);
      }
      const registered: RegisteredPlugin = {
        socketPath: d.socketPath,
        timestamp: d.timestamp,
        type: reg.type,
        name: reg.name,
        endpoint: reg.endpoint,
      };
      // In the actual state before the handler runs: a delete arriving meanwhile becomes a
      // deregistration once this operation ends, instead of being lost.
      o.asw.addPlugin(registered);
      try {
        await handler.registerPlugin(reg, signal);
      } catch (e) {
        o.asw.removeIfTimestamp(d.socketPath, d.timestamp);
        const reason = `registration of ${reg.type} ${reg.name} failed: ${toStowageError(e).message}`;
        await notify(client, false, reason);
        fail(reason);
        throw toStowageError(e);
      }
      await notify(client, true, '');
      log.info('plugin registered', { plugin: reg.name, type: reg.type, endpoint: reg.endpoint, socket: d.socketPath });
      o.observer?.registered(registered);
    } finally {
      client.close();
    }
  };

  const unregister = async (p: RegisteredPlugin, signal: AbortSignal): Promise<void> => {
    o.asw.removeIfTimestamp(p.socketPath, p.timestamp);
    const handler = o.handlers[p.type];
    if (handler) await handler.deregisterPlugin(p, signal);
    log.info('plugin deregistered', { plugin: p.name, type: p.type, socket: p.socketPath });
    o.observer?.deregistered(p);
  };

  return { register, unregister };
}

/** `<name>-reg.sock` → name: how a plugin is named before it answered. */
export function guessName(socketPath: string): string {
  const b = basename(socketPath);
  return b.endsWith('-reg.sock') ? b.slice(0, -'-reg.sock'.length) : b;
}
