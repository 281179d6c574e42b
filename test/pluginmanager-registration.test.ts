/**
 * The plugin manager end to end: the hostpath CSI driver and our registrar (node-driver-registrar's
 * wire behaviour) register with the node agent against a real API server, over real sockets.
 */
import { describe, it, expect, beforeEach, afterEach, vi } from 'vitest';
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { startFakeDriver } from '../src/csi/fake-driver.test-kit.js';
import { TOPOLOGY_KEY } from '../src/csi/hostpath/index.js';
import {
  NODE,
  getCsiNode,
  getNode,
  nodeEvents,
  nodeIds,
  pluginStatuses,
  setupEnv,
  startAgent,
  startHostpath,
  startRegistrarFor,
  teardownEnv,
  type Env,
} from './pluginmanager-kit.js';

const HP = 'hostpath.csi.stowage.io';
const WAIT = { timeout: 15_000, interval: 20 };

let env: Env;
beforeEach(async () => {
  env = await setupEnv();
});
afterEach(async () => {
  await teardownEnv(env);
});

describe('plugin manager with the hostpath driver and our registrar', () => {
  it('creates the Node with its lease and kubelet directories', async () => {
    const agent = await startAgent(env);
    const node = await getNode(env);
    expect(node.metadata?.labels).toMatchObject({ 'kubernetes.io/hostname': NODE, 'kubernetes.io/os': 'linux' });
    expect(node.metadata?.annotations?.['volumes.kubernetes.io/controller-managed-attach-detach']).toBe('true');
    expect(node.status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({
      status: 'True',
      reason: 'KubeletReady',
    });
    expect(node.status?.addresses?.map((a) => a.type)).toContain('Hostname');
    const lease = await env.client.resource('Lease').get(NODE, { namespace: 'kube-node-lease' });
    expect(lease.spec).toMatchObject({ holderIdentity: NODE, leaseDurationSeconds: 40 });
    const before = lease.spec?.renewTime;
    await agent.nodeStatus.sync();
    const renewed = await env.client.resource('Lease').get(NODE, { namespace: 'kube-node-lease' });
    expect(renewed.spec?.renewTime).not.toBe(before);
    for (const d of ['plugins_registry', 'plugins', 'pods']) expect(existsSync(`${env.root}/${d}`)).toBe(true);

    // A Node deleted under the agent comes back with its next status update, as the kubelet's does.
    await env.client.resource('Node').delete(NODE);
    await agent.nodeStatus.sync();
    expect((await getNode(env)).status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
  });

  it('registers: CSINode entry, node-id annotation, topology label, status; deregisters and re-registers with the socket', async () => {
    const agent = await startAgent(env);
    const hp = await startHostpath(env, HP, 'hp-node-1', 7);
    const reg = await startRegistrarFor(env, hp.socket);

    await vi.waitFor(async () => {
      const csinode = await getCsiNode(env);
      expect(csinode?.spec.drivers).toEqual([
        { name: HP, nodeID: 'hp-node-1', topologyKeys: [TOPOLOGY_KEY], allocatable: { count: 7 } },
      ]);
    }, WAIT);
    const csinode = await getCsiNode(env);
    expect(csinode?.metadata?.ownerReferences?.[0]).toMatchObject({
      kind: 'Node',
      name: NODE,
      uid: (await getNode(env)).metadata?.uid,
    });
    await agent.pluginManager.idle();
    let node = await getNode(env);
    expect(nodeIds(node)).toEqual({ [HP]: 'hp-node-1' });
    expect(node.metadata?.labels?.[TOPOLOGY_KEY]).toBe('hp-node-1');
    expect(pluginStatuses(node)[HP]).toMatchObject({ state: 'registered' });
    expect(agent.csiDrivers.getDriver(HP)).toMatchObject({
      endpoint: hp.socket,
      highestSupportedVersion: '1.0.0',
      socketPath: reg.socketPath,
    });
    expect((await nodeEvents(env)).map((e) => e.reason)).toContain('PluginRegistered');

    // Deleting the registration socket (the registrar stops) deregisters the driver.
    await reg.stop();
    await vi.waitFor(async () => {
      expect((await getCsiNode(env))?.spec.drivers ?? []).toEqual([]);
      const n = await getNode(env);
      expect(n.metadata?.annotations?.['csi.volume.kubernetes.io/nodeid']).toBeUndefined();
    }, WAIT);
    await agent.pluginManager.idle();
    expect(agent.csiDrivers.getDriver(HP)).toBeUndefined();
    node = await getNode(env);
    expect(pluginStatuses(node)[HP]).toBeUndefined();
    expect((await nodeEvents(env)).map((e) => e.reason)).toContain('PluginDeregistered');

    // Re-creating it registers again.
    await startRegistrarFor(env, hp.socket);
    await vi.waitFor(async () => {
      expect((await getCsiNode(env))?.spec.drivers?.map((d) => d.name)).toEqual([HP]);
      expect(nodeIds(await getNode(env))).toEqual({ [HP]: 'hp-node-1' });
    }, WAIT);
  });

  it('two drivers coexist in the annotation and CSINode; removing one keeps the other', async () => {
    const agent = await startAgent(env);
    const a = await startHostpath(env, HP, 'node-a');
    const bSock = join(env.root, 'plugins', 'fake', 'csi.sock');
    mkdirSync(dirname(bSock), { recursive: true });
    const fake = await startFakeDriver({ socket: bSock, name: 'fake.csi.stowage.io', nodeId: 'node-b' });
    env.cleanups.push(() => fake.stop());
    const ra = await startRegistrarFor(env, a.socket);
    await startRegistrarFor(env, bSock);
    await vi.waitFor(async () => {
      expect((await getCsiNode(env))?.spec.drivers?.map((d) => [d.name, d.nodeID]).sort()).toEqual([
        ['fake.csi.stowage.io', 'node-b'],
        [HP, 'node-a'],
      ]);
      expect(nodeIds(await getNode(env))).toEqual({ 'fake.csi.stowage.io': 'node-b', [HP]: 'node-a' });
    }, WAIT);
    expect(
      agent.csiDrivers
        .listDrivers()
        .map((d) => d.name)
        .sort(),
    ).toEqual(['fake.csi.stowage.io', HP]);
    const labels = (await getNode(env)).metadata?.labels;
    expect(labels).toMatchObject({ [TOPOLOGY_KEY]: 'node-a', 'topology.fake/node': 'node-b' });

    await ra.stop();
    await vi.waitFor(async () => {
      expect((await getCsiNode(env))?.spec.drivers?.map((d) => d.name)).toEqual(['fake.csi.stowage.io']);
      expect(nodeIds(await getNode(env))).toEqual({ 'fake.csi.stowage.io': 'node-b' });
    }, WAIT);
  });

  it("a topology label colliding with the node's labels is refused, reported, and nothing is written", async () => {
    const agent = await startAgent(env);
    const a = await startHostpath(env, 'a.csi.stowage.io', 'node-a');
    const b = await startHostpath(env, 'b.csi.stowage.io', 'node-b'); // same topology key, another value
    await startRegistrarFor(env, a.socket);
    await vi.waitFor(async () => expect(nodeIds(await getNode(env))).toEqual({ 'a.csi.stowage.io': 'node-a' }), WAIT);
    const rb = await startRegistrarFor(env, b.socket);
    await expect(rb.run).rejects.toThrow(/collides/); // told so: the registrar exits, like upstream
    await vi.waitFor(async () => {
      await agent.pluginManager.idle();
      expect(pluginStatuses(await getNode(env))['b.csi.stowage.io']).toMatchObject({
        state: 'failing',
        reason: expect.stringContaining('collides'),
      });
    }, WAIT);
    expect(nodeIds(await getNode(env))).toEqual({ 'a.csi.stowage.io': 'node-a' });
    expect((await getCsiNode(env))?.spec.drivers?.map((d) => d.name)).toEqual(['a.csi.stowage.io']);
    expect(agent.csiDrivers.getDriver('b.csi.stowage.io')).toBeUndefined();
    expect((await nodeEvents(env)).find((e) => e.reason === 'PluginRegistrationFailed')?.type).toBe('Warning');
  });

  it('a restarted agent registers the sockets already present and drops drivers that left meanwhile', async () => {
    const first = await startAgent(env);
    const hp = await startHostpath(env, HP, 'hp-node-1');
    await startRegistrarFor(env, hp.socket);
    const gSock = join(env.root, 'plugins', 'gone', 'csi.sock');
    mkdirSync(dirname(gSock), { recursive: true });
    const gone = await startFakeDriver({ socket: gSock, name: 'gone.csi.stowage.io', nodeId: 'g' });
    env.cleanups.push(() => gone.stop());
    const goneReg = await startRegistrarFor(env, gSock);
    await vi.waitFor(
      async () =>
        expect((await getCsiNode(env))?.spec.drivers?.map((d) => d.name).sort()).toEqual(['gone.csi.stowage.io', HP]),
      WAIT,
    );
    await first.stop();

    // While the agent is down: one driver leaves (its socket goes), and the API loses the other's entries.
    await goneReg.stop();
    const csinode = await getCsiNode(env);
    await env.client.resource('CSINode').delete(NODE);
    await env.client.resource('CSINode').create({
      metadata: { name: NODE, ownerReferences: csinode?.metadata?.ownerReferences },
      spec: { drivers: (csinode?.spec.drivers ?? []).filter((d) => d.name === 'gone.csi.stowage.io') },
    });
    await env.client.resource('Node').patch(NODE, 'merge', {
      metadata: {
        annotations: { 'csi.volume.kubernetes.io/nodeid': JSON.stringify({ 'gone.csi.stowage.io': 'g' }) },
      },
    });

    const second = await startAgent(env);
    await vi.waitFor(async () => {
      expect((await getCsiNode(env))?.spec.drivers?.map((d) => d.name)).toEqual([HP]);
      expect(nodeIds(await getNode(env))).toEqual({ [HP]: 'hp-node-1' });
    }, WAIT);
    expect(second.csiDrivers.getDriver(HP)?.endpoint).toBe(hp.socket);
    expect(second.csiDrivers.getDriver('gone.csi.stowage.io')).toBeUndefined();
  });

  it('a driver that dies after registering is reported unhealthy, and healthy again when back', async () => {
    const agent = await startAgent(env, { healthPeriodMs: 100 });
    const hp = await startHostpath(env, HP, 'hp-node-1');
    await startRegistrarFor(env, hp.socket);
    await vi.waitFor(async () => expect(agent.pluginManager.statuses()[HP]?.state).toBe('registered'), WAIT);

    await hp.stop();
    await vi.waitFor(async () => {
      await agent.pluginManager.idle();
      expect(pluginStatuses(await getNode(env))[HP]).toMatchObject({
        state: 'unhealthy',
        reason: expect.stringContaining('does not answer'),
      });
    }, WAIT);
    const warn = (await nodeEvents(env)).find((e) => e.reason === 'PluginUnhealthy');
    expect(warn?.type).toBe('Warning');

    await startHostpath(env, HP, 'hp-node-1');
    await vi.waitFor(async () => {
      await agent.pluginManager.idle();
      expect(pluginStatuses(await getNode(env))[HP]?.state).toBe('registered');
    }, WAIT);
  });
});
