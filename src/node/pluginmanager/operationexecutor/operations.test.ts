import { describe, it, expect, beforeEach, afterEach } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { registrationService } from '../../../csi/proto/index.js';
import type { PluginInfo, RegistrationStatus } from '../../../csi/proto/types.js';
import type { Logger } from '../../../util/log.js';
import { newActualStateOfWorld, type ActualStateOfWorld } from '../cache/actual-state.js';
import { socketPathOf, type SocketPath } from '../cache/types.js';
import { PluginRefusedError, PluginUnreachableError } from '../errors.js';
import type { PluginHandler, RegistrationObserver } from '../handler.js';
import { guessName, newPluginOperations } from './operations.js';

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => quiet };

let dir: string;
let server: grpc.Server | undefined;
let notified: RegistrationStatus[];
let asw: ActualStateOfWorld;
let failures: string[];
const observer: RegistrationObserver = {
  registered() {},
  failed: (_p, reason) => failures.push(reason),
  deregistered() {},
  socketRemoved() {},
};

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'stowage-ops-'));
  notified = [];
  failures = [];
  asw = newActualStateOfWorld();
});
afterEach(async () => {
  server?.forceShutdown();
  server = undefined;
  rmSync(dir, { recursive: true, force: true });
});

async function serve(info: PluginInfo): Promise<SocketPath> {
  const p = join(dir, `${info.name ?? 'x'}-reg.sock`);
  server = new grpc.Server();
  server.addService(registrationService(), {
    GetInfo: (_c: unknown, cb: grpc.sendUnaryData<PluginInfo>) => cb(null, info),
    NotifyRegistrationStatus: (c: grpc.ServerUnaryCall<RegistrationStatus, object>, cb: grpc.sendUnaryData<object>) => {
      notified.push(c.request);
      cb(null, {});
    },
  });
  await new Promise<void>((resolve, reject) =>
    server?.bindAsync(`unix://${p}`, grpc.ServerCredentials.createInsecure(), (e) => (e ? reject(e) : resolve())),
  );
  return socketPathOf(p);
}

function fakeHandler(
  o: { register?: () => Promise<void>; validate?: () => void } = {},
): PluginHandler & { log: string[] } {
  const log: string[] = [];
  return {
    log,
    validatePlugin: (p) => {
      log.push(`validate ${p.name} ${p.endpoint}`);
      o.validate?.();
    },
    registerPlugin: async (p) => {
      log.push(`register ${p.name} inAsw=${asw.get(p.socketPath) !== undefined}`);
      await o.register?.();
    },
    deregisterPlugin: async (p) => {
      log.push(`deregister ${p.name}`);
    },
  };
}

const signal = new AbortController().signal;
const csi = (over: Partial<PluginInfo> = {}): PluginInfo => ({
  type: 'CSIPlugin',
  name: 'd.csi',
  endpoint: '/plugins/d/csi.sock',
  supportedVersions: ['1.0.0'],
  ...over,
});

describe('register and unregister operations', () => {
  it('registers: validate, add to actual state BEFORE the handler, register, notify true', async () => {
    const sock = await serve(csi());
    const h = fakeHandler();
    const ops = newPluginOperations({ asw, handlers: { CSIPlugin: h }, observer, log: quiet });
    await ops.register({ socketPath: sock, timestamp: 7 }, signal);
    expect(h.log).toEqual(['validate d.csi /plugins/d/csi.sock', 'register d.csi inAsw=true']);
    expect(asw.get(sock)).toEqual({
      socketPath: sock,
      timestamp: 7,
      type: 'CSIPlugin',
      name: 'd.csi',
      endpoint: '/plugins/d/csi.sock',
    });
    expect(notified).toEqual([{ pluginRegistered: true, error: '' }]);
  });

  it('an empty endpoint becomes the registration socket itself', async () => {
    const sock = await serve(csi({ endpoint: '' }));
    const h = fakeHandler();
    await newPluginOperations({ asw, handlers: { CSIPlugin: h }, log: quiet }).register(
      { socketPath: sock, timestamp: 1 },
      signal,
    );
    expect(asw.get(sock)?.endpoint).toBe(sock);
  });

  it.each([
    {
      name: 'a type without handler',
      info: csi({ type: 'DevicePlugin' }),
      validate: undefined,
      want: 'no handler registered for plugin type: DevicePlugin',
    },
    {
      name: 'an unknown type',
      info: csi({ type: 'Banana' }),
      validate: undefined,
      want: 'no handler registered for plugin type: Banana',
    },
    { name: 'an empty name', info: csi({ name: '' }), validate: undefined, want: 'reported an empty name' },
    {
      name: 'a validation refusal',
      info: csi(),
      validate: () => {
        throw new PluginRefusedError('too old');
      },
      want: 'too old',
    },
  ])('refuses $name and tells the plugin', async ({ info, validate, want }) => {
    const sock = await serve(info);
    const h = fakeHandler({ validate });
    const ops = newPluginOperations({ asw, handlers: { CSIPlugin: h }, observer, log: quiet });
    await expect(ops.register({ socketPath: sock, timestamp: 1 }, signal)).rejects.toBeInstanceOf(PluginRefusedError);
    expect(notified).toEqual([{ pluginRegistered: false, error: expect.stringContaining(want) }]);
    expect(asw.registeredPlugins()).toEqual([]);
    expect(h.log.filter((l) => l.startsWith('register'))).toEqual([]);
    expect(failures).toEqual([expect.stringContaining(want)]);
  });

  it('a failing handler leaves the actual state as it was and the plugin is told', async () => {
    const sock = await serve(csi());
    const h = fakeHandler({
      register: async () => {
        throw new Error('NodeGetInfo: INTERNAL');
      },
    });
    const ops = newPluginOperations({ asw, handlers: { CSIPlugin: h }, observer, log: quiet });
    await expect(ops.register({ socketPath: sock, timestamp: 1 }, signal)).rejects.toThrow('NodeGetInfo');
    expect(asw.registeredPlugins()).toEqual([]);
    expect(notified).toEqual([{ pluginRegistered: false, error: expect.stringContaining('NodeGetInfo: INTERNAL') }]);
  });

  it('a socket nobody answers on is unreachable (retryable)', async () => {
    const ops = newPluginOperations({
      asw,
      handlers: { CSIPlugin: fakeHandler() },
      observer,
      dialTimeoutMs: 500,
      log: quiet,
    });
    const err = await ops
      .register({ socketPath: socketPathOf(join(dir, 'none-reg.sock')), timestamp: 1 }, signal)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PluginUnreachableError);
    expect((err as PluginUnreachableError).retryable).toBe(true);
  });

  it('unregister removes from actual state first, then calls the handler', async () => {
    const sock = await serve(csi());
    const h = fakeHandler();
    const ops = newPluginOperations({ asw, handlers: { CSIPlugin: h }, log: quiet });
    await ops.register({ socketPath: sock, timestamp: 1 }, signal);
    const p = asw.get(sock);
    if (!p) throw new Error('not registered');
    h.deregisterPlugin = async () => {
      h.log.push(`deregister inAsw=${asw.get(sock) !== undefined}`);
    };
    await ops.unregister(p, signal);
    expect(h.log.at(-1)).toBe('deregister inAsw=false');
  });

  it('names a plugin from its socket before it answered', () => {
    expect(guessName('/r/hostpath.csi.k8s.io-reg.sock')).toBe('hostpath.csi.k8s.io');
    expect(guessName('/r/odd.sock')).toBe('odd.sock');
  });
});
