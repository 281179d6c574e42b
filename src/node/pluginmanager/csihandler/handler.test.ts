import { describe, it, expect, afterEach } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { handler, startFakeDriver, type FakeDriver } from '../../../csi/fake-driver.test-kit.js';
import { FakeClock } from '../../../client/fake-clock.test-kit.js';
import { InvalidError } from '../../../util/errors.js';
import type { Logger } from '../../../util/log.js';
import { socketPathOf } from '../cache/types.js';
import { PluginRefusedError } from '../errors.js';
import type { PluginRegistration } from '../handler.js';
import { newCsiPluginHandler } from './handler.js';
import type { DriverNodeInfo, NodeInfoManager } from './nodeinfo.js';
import { newCsiDriverRegistry } from './registry.js';

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => quiet };
const signal = new AbortController().signal;
const reg = (over: Partial<PluginRegistration> = {}): PluginRegistration => ({
  socketPath: socketPathOf('/r/a-reg.sock'),
  type: 'CSIPlugin',
  name: 'a.csi',
  endpoint: '/p/a.sock',
  versions: ['1.0.0'],
  ...over,
});

function fakeNodeInfo(
  o: { installFails?: Error } = {},
): NodeInfoManager & { installed: DriverNodeInfo[]; uninstalled: string[] } {
  const installed: DriverNodeInfo[] = [];
  const uninstalled: string[] = [];
  return {
    installed,
    uninstalled,
    installDriver: async (d) => {
      if (o.installFails) throw o.installFails;
      installed.push(d);
    },
    uninstallDriver: async (name) => {
      uninstalled.push(name);
    },
    installedDrivers: async () => installed.map((d) => d.driver),
  };
}

let dir: string | undefined;
let driver: FakeDriver | undefined;
afterEach(async () => {
  await driver?.stop();
  driver = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function fakeDriver(nodeGetInfo?: () => Promise<unknown>): Promise<string> {
  dir = mkdtempSync(join(tmpdir(), 'stowage-csih-'));
  const socket = join(dir, 'csi.sock');
  driver = await startFakeDriver({
    socket,
    name: 'a.csi',
    nodeId: 'n1',
    ...(nodeGetInfo ? { node: { NodeGetInfo: handler(nodeGetInfo) } } : {}),
  });
  return socket;
}

describe('CSI plugin handler: validation', () => {
  const registry = newCsiDriverRegistry();
  registry.set({ name: 'a.csi', endpoint: '/p/a.sock', highestSupportedVersion: '1.2.0', socketPath: '/r/a-reg.sock' });
  const h = newCsiPluginHandler({ nodeInfo: fakeNodeInfo(), registry, log: quiet });

  it.each([
    { name: 'a 1.x version', p: reg({ name: 'b.csi', versions: ['1.0.0'] }), refused: false },
    { name: 'no 1.x version', p: reg({ name: 'b.csi', versions: ['0.3.0', '2.0.0'] }), refused: true },
    { name: 'no versions at all', p: reg({ name: 'b.csi', versions: [] }), refused: true },
    { name: 'the same socket again (re-registration)', p: reg({ versions: ['1.0.0'] }), refused: false },
    {
      name: 'a second socket with a lower version',
      p: reg({ socketPath: socketPathOf('/r/b-reg.sock'), versions: ['1.1.0'] }),
      refused: true,
    },
    {
      name: 'a second socket with an equal version',
      p: reg({ socketPath: socketPathOf('/r/b-reg.sock'), versions: ['1.2.0'] }),
      refused: true,
    },
    {
      name: 'a second socket with a higher version',
      p: reg({ socketPath: socketPathOf('/r/b-reg.sock'), versions: ['1.3.0'] }),
      refused: false,
    },
  ])('$name → refused: $refused', ({ p, refused }) => {
    if (refused) expect(() => h.validatePlugin(p)).toThrow(PluginRefusedError);
    else expect(() => h.validatePlugin(p)).not.toThrow();
  });
});

describe('CSI plugin handler: register and deregister', () => {
  it('calls NodeGetInfo, publishes the node info and keeps the driver in the registry', async () => {
    const endpoint = await fakeDriver();
    const nodeInfo = fakeNodeInfo();
    const h = newCsiPluginHandler({ nodeInfo, log: quiet });
    await h.registerPlugin(reg({ endpoint, versions: ['1.0.0', '1.4.0'] }), signal);
    expect(nodeInfo.installed).toEqual([
      { driver: 'a.csi', nodeId: 'n1', topology: { 'topology.fake/node': 'n1' }, maxVolumesPerNode: 0 },
    ]);
    expect(h.registry.getDriver('a.csi')).toEqual({
      name: 'a.csi',
      endpoint,
      highestSupportedVersion: '1.4.0',
      socketPath: '/r/a-reg.sock',
    });
    expect(h.clients().map((c) => c.name)).toEqual(['a.csi']);
    h.close();
  });

  it.each([
    {
      name: 'NodeGetInfo fails',
      nodeGetInfo: () => Promise.reject({ code: grpc.status.INTERNAL, details: 'broken' }),
      installFails: undefined,
      want: /broken/,
    },
    {
      name: 'NodeGetInfo has no node id',
      nodeGetInfo: () => Promise.resolve({ nodeId: '', maxVolumesPerNode: 0, accessibleTopology: null }),
      installFails: undefined,
      want: /empty node_id/,
    },
    {
      name: 'the API refuses',
      nodeGetInfo: undefined,
      installFails: new InvalidError('topology label collides'),
      want: /collides/,
    },
  ])('$name → the registry entry is undone', async ({ nodeGetInfo, installFails, want }) => {
    const endpoint = await fakeDriver(nodeGetInfo);
    const registry = newCsiDriverRegistry();
    const previous = {
      name: 'a.csi',
      endpoint: '/old.sock',
      highestSupportedVersion: '1.0.0',
      socketPath: '/r/old-reg.sock',
    };
    registry.set(previous);
    const h = newCsiPluginHandler({ nodeInfo: fakeNodeInfo({ installFails }), registry, log: quiet });
    await expect(h.registerPlugin(reg({ endpoint, versions: ['1.1.0'] }), signal)).rejects.toThrow(want);
    expect(h.registry.getDriver('a.csi')).toEqual(previous);
    expect(h.clients()).toEqual([]);
  });

  it('deregistering removes the driver only when the registry entry came from that socket', async () => {
    const nodeInfo = fakeNodeInfo();
    const registry = newCsiDriverRegistry();
    registry.set({
      name: 'a.csi',
      endpoint: '/p/a.sock',
      highestSupportedVersion: '1.0.0',
      socketPath: '/r/new-reg.sock',
    });
    const h = newCsiPluginHandler({ nodeInfo, registry, clock: new FakeClock(), log: quiet });
    const plugin = {
      socketPath: socketPathOf('/r/old-reg.sock'),
      timestamp: 1,
      type: 'CSIPlugin' as const,
      name: 'a.csi',
      endpoint: '/p/a.sock',
    };
    await h.deregisterPlugin(plugin, signal);
    expect(nodeInfo.uninstalled).toEqual([]);
    expect(h.registry.getDriver('a.csi')).toBeDefined();
    await h.deregisterPlugin({ ...plugin, socketPath: socketPathOf('/r/new-reg.sock') }, signal);
    expect(nodeInfo.uninstalled).toEqual(['a.csi']);
    expect(h.registry.getDriver('a.csi')).toBeUndefined();
  });

  it('prunes drivers the API lists that are not registered', async () => {
    const nodeInfo = fakeNodeInfo();
    nodeInfo.installed.push(
      { driver: 'gone.csi', nodeId: 'x', topology: {}, maxVolumesPerNode: 0 },
      { driver: 'a.csi', nodeId: 'y', topology: {}, maxVolumesPerNode: 0 },
    );
    const registry = newCsiDriverRegistry();
    registry.set({
      name: 'a.csi',
      endpoint: '/p/a.sock',
      highestSupportedVersion: '1.0.0',
      socketPath: '/r/a-reg.sock',
    });
    const h = newCsiPluginHandler({ nodeInfo, registry, log: quiet });
    expect(await h.pruneStale(signal)).toEqual(['gone.csi']);
    expect(nodeInfo.uninstalled).toEqual(['gone.csi']);
  });
});
