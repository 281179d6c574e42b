/**
 * Registrations the node agent must refuse or survive, driven by fake registration servers and
 * fake CSI drivers (fault injection) against a real API server.
 */
import { describe, it, expect, beforeEach, afterEach, vi } from 'vitest';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { socketPathOf } from '../src/node/pluginmanager/cache/types.js';
import { handler, startFakeDriver } from '../src/csi/fake-driver.test-kit.js';
import { csiServices, registrationService } from '../src/csi/proto/index.js';
import type { PluginInfo, RegistrationStatus } from '../src/csi/proto/types.js';
import {
  getCsiNode,
  getNode,
  nodeIds,
  pluginStatuses,
  setupEnv,
  startAgent,
  startFakeRegistration,
  teardownEnv,
  type Env,
} from './pluginmanager-kit.js';

const WAIT = { timeout: 15_000, interval: 20 };
const FAKE = 'fake.csi.stowage.io';

let env: Env;
beforeEach(async () => {
  env = await setupEnv();
});
afterEach(async () => {
  await teardownEnv(env);
});

function driverSocket(name: string): string {
  const dir = join(env.root, 'plugins', name);
  mkdirSync(dir, { recursive: true });
  return join(dir, 'csi.sock');
}

const csiInfo = (endpoint: string, versions: string[], name = FAKE): PluginInfo => ({
  type: 'CSIPlugin',
  name,
  endpoint,
  supportedVersions: versions,
});

describe('plugin manager refusals and faults', () => {
  it('refuses a plugin without a CSI 1.x version and tells it why', async () => {
    await startAgent(env);
    const reg = await startFakeRegistration(
      env,
      join(env.registry, `${FAKE}-reg.sock`),
      csiInfo('/nowhere.sock', ['0.3.0', '2.0.0']),
    );
    await vi.waitFor(
      () => expect(reg.notified[0]).toMatchObject({ pluginRegistered: false, error: expect.stringContaining('1.x') }),
      WAIT,
    );
    expect(env.agent?.csiDrivers.getDriver(FAKE)).toBeUndefined();
    await env.agent?.pluginManager.idle();
    expect(pluginStatuses(await getNode(env))[FAKE]).toMatchObject({
      state: 'failing',
      reason: expect.stringContaining('0.3.0, 2.0.0'),
    });
  });

  it('refuses a DevicePlugin: no handler for that type', async () => {
    await startAgent(env);
    const reg = await startFakeRegistration(env, join(env.registry, 'gpu-reg.sock'), {
      type: 'DevicePlugin',
      name: 'gpu',
      endpoint: '',
      supportedVersions: ['v1beta1'],
    });
    await vi.waitFor(
      () =>
        expect(reg.notified[0]).toEqual({
          pluginRegistered: false,
          error: 'no handler registered for plugin type: DevicePlugin',
        }),
      WAIT,
    );
    await env.agent?.pluginManager.idle();
    expect(env.agent?.pluginManager.actualState.registeredPlugins()).toEqual([]);
    expect(pluginStatuses(await getNode(env))).toEqual({}); // not a CSI driver: not in the CSI status
  });

  it('NodeGetInfo failing leaves nothing half-written, and the plugin is told', async () => {
    await startAgent(env);
    const sock = driverSocket('broken');
    const driver = await startFakeDriver({
      socket: sock,
      name: FAKE,
      node: { NodeGetInfo: handler(() => Promise.reject({ code: grpc.status.INTERNAL, details: 'disk on fire' })) },
    });
    env.cleanups.push(() => driver.stop());
    const reg = await startFakeRegistration(env, join(env.registry, `${FAKE}-reg.sock`), csiInfo(sock, ['1.0.0']));
    await vi.waitFor(
      () =>
        expect(reg.notified[0]).toMatchObject({
          pluginRegistered: false,
          error: expect.stringContaining('disk on fire'),
        }),
      WAIT,
    );
    await env.agent?.pluginManager.idle();
    const node = await getNode(env);
    expect(nodeIds(node)).toEqual({});
    expect(Object.keys(node.metadata?.labels ?? {}).filter((k) => k.startsWith('topology.'))).toEqual([]);
    expect((await getCsiNode(env))?.spec.drivers ?? []).toEqual([]);
    expect(env.agent?.csiDrivers.getDriver(FAKE)).toBeUndefined();
    expect(env.agent?.pluginManager.actualState.registeredPlugins()).toEqual([]);
    expect(pluginStatuses(node)[FAKE]).toMatchObject({
      state: 'failing',
      reason: expect.stringContaining('disk on fire'),
    });
  });

  it('an empty endpoint means the registration socket itself serves CSI', async () => {
    await startAgent(env);
    const sock = join(env.registry, `${FAKE}-reg.sock`);
    const server = new grpc.Server();
    const notified: RegistrationStatus[] = [];
    server.addService(registrationService(), {
      GetInfo: (_c: unknown, cb: grpc.sendUnaryData<PluginInfo>) => cb(null, csiInfo('', ['1.0.0'])),
      NotifyRegistrationStatus: (
        c: grpc.ServerUnaryCall<RegistrationStatus, object>,
        cb: grpc.sendUnaryData<object>,
      ) => {
        notified.push(c.request);
        cb(null, {});
      },
    });
    server.addService(csiServices().node, {
      NodeGetInfo: handler(() => ({ nodeId: 'same-socket', maxVolumesPerNode: 0, accessibleTopology: null })),
    });
    mkdirSync(env.registry, { recursive: true });
    await new Promise<void>((resolve, reject) =>
      server.bindAsync(`unix://${sock}`, grpc.ServerCredentials.createInsecure(), (e) => (e ? reject(e) : resolve())),
    );
    env.cleanups.push(() => new Promise<void>((r) => server.tryShutdown(() => r())));
    await vi.waitFor(() => expect(notified[0]).toEqual({ pluginRegistered: true, error: '' }), WAIT);
    expect(env.agent?.csiDrivers.getDriver(FAKE)?.endpoint).toBe(sock);
    expect(nodeIds(await getNode(env))).toEqual({ [FAKE]: 'same-socket' });
  });

  it('a second socket for a registered driver needs a higher version', async () => {
    await startAgent(env);
    const sock = driverSocket('fake');
    const driver = await startFakeDriver({ socket: sock, name: FAKE, nodeId: 'n' });
    env.cleanups.push(() => driver.stop());
    const first = await startFakeRegistration(env, join(env.registry, 'first-reg.sock'), csiInfo(sock, ['1.1.0']));
    await vi.waitFor(() => expect(first.notified[0]?.pluginRegistered).toBe(true), WAIT);
    const same = await startFakeRegistration(env, join(env.registry, 'same-reg.sock'), csiInfo(sock, ['1.1.0']));
    await vi.waitFor(
      () =>
        expect(same.notified[0]).toMatchObject({
          pluginRegistered: false,
          error: expect.stringContaining('already registered'),
        }),
      WAIT,
    );
    const higher = await startFakeRegistration(
      env,
      join(env.registry, 'higher-reg.sock'),
      csiInfo(sock, ['1.0.0', '1.5.0']),
    );
    await vi.waitFor(() => expect(higher.notified[0]?.pluginRegistered).toBe(true), WAIT);
    expect(env.agent?.csiDrivers.getDriver(FAKE)).toMatchObject({
      highestSupportedVersion: '1.5.0',
      socketPath: join(env.registry, 'higher-reg.sock'),
    });
  });

  it('a stale socket is retried with backoff and forgotten when the file goes', async () => {
    const agent = await startAgent(env);
    mkdirSync(env.registry, { recursive: true });
    const stale = join(env.registry, `${FAKE}-reg.sock`);
    // A socket file nobody listens on, as a crashed registrar leaves behind.
    execFileSync('python3', ['-c', 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])', stale]);
    expect(existsSync(stale)).toBe(true);
    await vi.waitFor(
      () => expect(agent.pluginManager.statuses()[FAKE]).toMatchObject({ state: 'failing', unreachable: true }),
      WAIT,
    );
    expect(agent.pluginManager.desiredState.isAdded(socketPathOf(stale))).toBe(true);

    unlinkSync(stale);
    await vi.waitFor(() => {
      expect(agent.pluginManager.desiredState.pluginsToRegister()).toEqual([]);
      expect(agent.pluginManager.statuses()[FAKE]).toBeUndefined();
    }, WAIT);
    await agent.pluginManager.idle();
    expect(pluginStatuses(await getNode(env))[FAKE]).toBeUndefined();
  });

  it('a driver whose node id changed while the agent was down re-registers (CSINode entries are immutable)', async () => {
    const first = await startAgent(env);
    const sock = driverSocket('fake');
    let nodeId = 'before';
    const driver = await startFakeDriver({
      socket: sock,
      name: FAKE,
      node: { NodeGetInfo: handler(() => ({ nodeId, maxVolumesPerNode: 3, accessibleTopology: null })) },
    });
    env.cleanups.push(() => driver.stop());
    await startFakeRegistration(env, join(env.registry, `${FAKE}-reg.sock`), csiInfo(sock, ['1.0.0']));
    await vi.waitFor(
      async () =>
        expect((await getCsiNode(env))?.spec.drivers).toEqual([
          { name: FAKE, nodeID: 'before', topologyKeys: [], allocatable: { count: 3 } },
        ]),
      WAIT,
    );
    await first.stop();

    nodeId = 'after';
    await startAgent(env);
    await vi.waitFor(async () => {
      expect((await getCsiNode(env))?.spec.drivers).toEqual([
        { name: FAKE, nodeID: 'after', topologyKeys: [], allocatable: { count: 3 } },
      ]);
      expect(nodeIds(await getNode(env))).toEqual({ [FAKE]: 'after' });
    }, WAIT);
  });
});
