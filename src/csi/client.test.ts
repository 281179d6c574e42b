import { describe, it, expect, beforeEach, afterEach } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { status } from '@grpc/grpc-js';
import { CsiClient, CsiError, volumeIdOf, type CallTrace } from './client.js';
import { socketPath } from './grpc.js';
import { startFakeDriver, handler, type FakeDriver } from './fake-driver.test-kit.js';
import { CsiTraceHub } from './tracehub.js';

let dir: string;
let driver: FakeDriver | undefined;
let client: CsiClient | undefined;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'stowage-csi-client-'));
});
afterEach(async () => {
  client?.close();
  client = undefined;
  await driver?.stop();
  driver = undefined;
  rmSync(dir, { recursive: true, force: true });
});

describe('socketPath', () => {
  it.each([
    { in: 'unix:///run/csi.sock', want: '/run/csi.sock' },
    { in: 'unix:/run/csi.sock', want: '/run/csi.sock' },
    { in: '/run/csi.sock', want: '/run/csi.sock' },
  ])('$in', ({ in: input, want }) => expect(socketPath(input)).toBe(want));
  it('rejects an empty path', () => expect(() => socketPath('unix://')).toThrow());
});

describe('volumeIdOf', () => {
  it.each([
    { m: { volumeId: 'a' }, want: 'a' },
    { m: { sourceVolumeId: 'b', name: 'n' }, want: 'b' },
    { m: { volume: { volumeId: 'c' } }, want: 'c' },
    { m: { volumeId: '' }, want: undefined },
    { m: {}, want: undefined },
  ])('$m', ({ m, want }) => expect(volumeIdOf(m)).toBe(want));
});

describe('CsiClient against a fake driver', () => {
  it('connects, calls, and traces every call with volume id and status', async () => {
    const sock = join(dir, 'csi.sock');
    driver = await startFakeDriver({
      socket: sock,
      controller: {
        CreateVolume: handler((req: { name: string }) => ({
          volume: { volumeId: `id-${req.name}`, capacityBytes: 1 << 20 },
        })),
        DeleteVolume: handler(() => {
          throw { code: status.FAILED_PRECONDITION, details: 'in use' };
        }),
      },
    });
    client = new CsiClient({ endpoint: driver.endpoint });
    const seen: CallTrace[] = [];
    client.onCall((t) => seen.push(t));
    await client.connect({ timeoutMs: 5_000 });

    expect((await client.getPluginInfo()).name).toBe('fake.csi.stowage.io');
    const created = await client.createVolume({
      name: 'pvc-1',
      volumeCapabilities: [{ mount: {}, accessMode: { mode: 'SINGLE_NODE_WRITER' } }],
    });
    expect(created.volume?.volumeId).toBe('id-pvc-1');
    expect(created.volume?.capacityBytes).toBe(1 << 20);
    const err = await client.deleteVolume({ volumeId: 'id-pvc-1' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CsiError);
    expect((err as CsiError).grpcCode).toBe(status.FAILED_PRECONDITION);
    expect((err as CsiError).retryable).toBe(false);
    const unimpl = await client.nodeStageVolume({ volumeId: 'v' }).catch((e: unknown) => e);
    expect((unimpl as CsiError).grpcCodeName).toBe('UNIMPLEMENTED');

    const tr = client.trace();
    expect(tr.map((t) => [t.method, t.volumeId, t.code, t.error])).toEqual([
      ['/csi.v1.Identity/GetPluginInfo', undefined, 'OK', undefined],
      ['/csi.v1.Controller/CreateVolume', 'id-pvc-1', 'OK', undefined],
      ['/csi.v1.Controller/DeleteVolume', 'id-pvc-1', 'FAILED_PRECONDITION', 'in use'],
      ['/csi.v1.Node/NodeStageVolume', 'v', 'UNIMPLEMENTED', expect.any(String)],
    ]);
    expect(seen).toEqual(tr);
    for (const t of tr) expect(t.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('bounds the trace ring per client', async () => {
    driver = await startFakeDriver({ socket: join(dir, 'csi.sock') });
    client = new CsiClient({ endpoint: driver.endpoint, traceCapacity: 2 });
    await client.probe();
    await client.getPluginInfo();
    await client.nodeGetInfo();
    expect(client.trace().map((t) => t.method)).toEqual(['/csi.v1.Identity/GetPluginInfo', '/csi.v1.Node/NodeGetInfo']);
  });

  it('caches capabilities per connection as sets of enum names', async () => {
    driver = await startFakeDriver({ socket: join(dir, 'csi.sock') });
    client = new CsiClient({ endpoint: driver.endpoint });
    expect([...(await client.pluginCapabilities())]).toEqual(['CONTROLLER_SERVICE']);
    expect([...(await client.volumeExpansionModes())]).toEqual(['ONLINE']);
    expect([...(await client.controllerCapabilities())]).toEqual(['CREATE_DELETE_VOLUME']);
    expect([...(await client.nodeCapabilities())]).toEqual(['STAGE_UNSTAGE_VOLUME']);
    await client.pluginCapabilities();
    await client.nodeCapabilities();
    expect(driver.calls.filter((c) => c.endsWith('Capabilities'))).toEqual([
      'GetPluginCapabilities',
      'ControllerGetCapabilities',
      'NodeGetCapabilities',
    ]);
  });

  it('forgets cached capabilities when the driver restarts', async () => {
    const sock = join(dir, 'csi.sock');
    driver = await startFakeDriver({ socket: sock });
    client = new CsiClient({ endpoint: sock });
    expect([...(await client.nodeCapabilities())]).toEqual(['STAGE_UNSTAGE_VOLUME']);
    await driver.stop();
    driver = await startFakeDriver({
      socket: sock,
      node: { NodeGetCapabilities: handler(() => ({ capabilities: [{ rpc: { type: 'GET_VOLUME_STATS' } }] })) },
    });
    await client.connect({ timeoutMs: 10_000 });
    expect([...(await client.nodeCapabilities())]).toEqual(['GET_VOLUME_STATS']);
  });

  it('applies the per-call deadline: DEADLINE_EXCEEDED, retryable and uncertain', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    driver = await startFakeDriver({
      socket: join(dir, 'csi.sock'),
      node: {
        NodePublishVolume: handler(async () => {
          await held;
          return {};
        }),
      },
    });
    client = new CsiClient({ endpoint: driver.endpoint, timeouts: { node: 50 } });
    await client.connect({ timeoutMs: 5_000 });
    const err = (await client
      .nodePublishVolume({ volumeId: 'v', targetPath: '/t' })
      .catch((e: unknown) => e)) as CsiError;
    release();
    expect(err.grpcCodeName).toBe('DEADLINE_EXCEEDED');
    expect(err.retryable).toBe(true);
    expect(err.uncertain).toBe(true);
    expect(client.trace().at(-1)?.code).toBe('DEADLINE_EXCEEDED');
  });

  it('cancels a call when its signal aborts', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    driver = await startFakeDriver({
      socket: join(dir, 'csi.sock'),
      node: {
        NodeStageVolume: handler(async () => {
          await held;
          return {};
        }),
      },
    });
    client = new CsiClient({ endpoint: driver.endpoint });
    await client.connect({ timeoutMs: 5_000 });
    const ac = new AbortController();
    const p = client.nodeStageVolume({ volumeId: 'v' }, { signal: ac.signal }).catch((e: unknown) => e);
    ac.abort();
    const err = (await p) as CsiError;
    release();
    expect(err.grpcCodeName).toBe('CANCELLED');
  });

  it('connect gives up with UNAVAILABLE when nothing listens', async () => {
    client = new CsiClient({ endpoint: join(dir, 'absent.sock') });
    const err = (await client.connect({ timeoutMs: 200 }).catch((e: unknown) => e)) as CsiError;
    expect(err).toBeInstanceOf(CsiError);
    expect(err.grpcCodeName).toBe('UNAVAILABLE');
  });

  it('connect waits for a driver that starts later', async () => {
    const sock = join(dir, 'late.sock');
    client = new CsiClient({ endpoint: sock });
    const connected = client.connect({ timeoutMs: 10_000 });
    driver = await startFakeDriver({ socket: sock });
    await connected;
    expect(await client.isReady()).toBe(true);
  });
});

describe('CsiClient into a trace hub', () => {
  it('records caller, driver, the redacted request, the answer or status, and the object', async () => {
    driver = await startFakeDriver({
      socket: join(dir, 'csi.sock'),
      controller: {
        CreateVolume: handler((req: { name: string }) => ({
          volume: { volumeId: `id-${req.name}`, capacityBytes: 1 },
        })),
        ControllerPublishVolume: handler(() => {
          throw { code: status.NOT_FOUND, details: 'no such node' };
        }),
      },
    });
    const hub = new CsiTraceHub();
    client = new CsiClient({ endpoint: driver.endpoint, traceHub: hub, caller: 'csi-sidecar' });
    await client.getPluginInfo();
    const claim = { kind: 'PersistentVolumeClaim', namespace: 'ns', name: 'data' };
    await client.createVolume(
      { name: 'pvc-u1', secrets: { password: 'hunter2' }, volumeCapabilities: [] },
      { for: claim },
    );
    await client
      .controllerPublishVolume({ volumeId: 'id-pvc-u1', nodeId: 'n1', secrets: { token: 't0p' } })
      .catch(() => undefined);
    const calls = hub.query({ volumeIds: new Set(['id-pvc-u1']) });
    expect(calls.map((c) => [c.method, c.caller, c.driver, c.code])).toEqual([
      ['/csi.v1.Controller/CreateVolume', 'csi-provisioner', 'fake.csi.stowage.io', 'OK'],
      ['/csi.v1.Controller/ControllerPublishVolume', 'csi-attacher', 'fake.csi.stowage.io', 'NOT_FOUND'],
    ]);
    expect(calls[0]).toMatchObject({
      object: claim,
      request: { name: 'pvc-u1', secrets: { password: '***stripped***' } },
      response: { volume: { volumeId: 'id-pvc-u1' } },
    });
    expect(calls[1]).toMatchObject({ request: { secrets: { token: '***stripped***' } }, error: 'no such node' });
    expect(JSON.stringify(hub.query())).not.toMatch(/hunter2|t0p/);
    expect(hub.query()[0]).toMatchObject({ method: '/csi.v1.Identity/GetPluginInfo', caller: 'csi-sidecar' });
  });
});
