import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claim, eventsFor, eventually, startEnv, storageClass, type Env } from './csi-sidecar-kit.js';

const MiB = 1024 * 1024;
let env: Env;
let sidecar: ReturnType<Env['startSidecar']>;

beforeAll(async () => {
  // 64 MiB in all: a claim asking for more cannot grow, which makes a recoverable failure.
  env = await startEnv({ capacityBytes: 64 * MiB });
  sidecar = env.startSidecar();
  await env.client.resource('StorageClass').create(storageClass('sc'));
});
afterAll(async () => env?.close());

const claims = () => env.client.resource('PersistentVolumeClaim');

async function boundClaim(name: string, extra = {}) {
  const c = await claims().create(claim(name, 'sc', '1Mi', extra));
  await eventually(async () =>
    expect((await claims().get(name, { namespace: 'default' })).status?.phase).toBe('Bound'),
  );
  return `pvc-${c.metadata!.uid!}`;
}

const resize = (name: string, size: string) =>
  claims().patch(name, 'merge', { spec: { resources: { requests: { storage: size } } } }, { namespace: 'default' });

describe('resizer', () => {
  it('a filesystem volume grows; the claim capacity follows (no node expansion needed)', async () => {
    const pvName = await boundClaim('r1');
    await resize('r1', '4Mi');
    await eventually(async () =>
      expect((await claims().get('r1', { namespace: 'default' })).status?.capacity?.storage).toBe('4Mi'),
    );
    const pv = await env.client.resource('PersistentVolume').get(pvName);
    expect(pv.spec?.capacity?.storage).toBe('4Mi');
    const c = await claims().get('r1', { namespace: 'default' });
    expect(c.status?.allocatedResources?.storage).toBe('4Mi');
    expect(c.status?.allocatedResourceStatuses?.storage).toBeUndefined();
    expect((c.status?.conditions ?? []).map((x) => x.type)).toEqual([]);
    expect(sidecar.csi.expands.at(-1)?.capacityRange).toEqual({ requiredBytes: String(4 * MiB) });
    await eventually(async () => {
      const reasons = (await eventsFor(env.client, 'default', 'r1')).map((e) => e.reason);
      expect(reasons).toEqual(expect.arrayContaining(['Resizing', 'VolumeResizeSuccessful']));
    });
  });

  it('a block volume needs the node: FileSystemResizePending', async () => {
    const pvName = await boundClaim('r2', { volumeMode: 'Block' });
    await resize('r2', '2Mi');
    const c = await eventually(async () => {
      const got = await claims().get('r2', { namespace: 'default' });
      expect(got.status?.conditions?.find((x) => x.type === 'FileSystemResizePending')?.status).toBe('True');
      return got;
    });
    expect(c.status?.allocatedResourceStatuses?.storage).toBe('NodeResizePending');
    expect(c.status?.capacity?.storage).toBe('1Mi'); // the node agent finishes it
    expect((await env.client.resource('PersistentVolume').get(pvName)).spec?.capacity?.storage).toBe('2Mi');
    await eventually(async () =>
      expect((await eventsFor(env.client, 'default', 'r2')).map((e) => e.reason)).toContain('FileSystemResizeRequired'),
    );
  });

  it('a failed expansion is recovered by lowering the request', async () => {
    const pvName = await boundClaim('r3');
    await resize('r3', '1Gi');
    await eventually(async () => {
      const evs = await eventsFor(env.client, 'default', 'r3');
      expect(evs.find((e) => e.reason === 'VolumeResizeFailed')?.message).toMatch(
        /resize volume ".*" by resizer ".*" failed: .*OUT_OF_RANGE/,
      );
    });
    const failed = await claims().get('r3', { namespace: 'default' });
    expect(failed.status?.allocatedResources?.storage).toBe('1Gi');
    expect(failed.status?.allocatedResourceStatuses?.storage).toBe('ControllerResizeFailed'); // infeasible: not retried as is
    expect((await env.client.resource('PersistentVolume').get(pvName)).spec?.capacity?.storage).toBe('1Mi');

    await resize('r3', '3Mi');
    await eventually(async () => {
      const c = await claims().get('r3', { namespace: 'default' });
      expect(c.status?.capacity?.storage).toBe('3Mi');
      expect(c.status?.allocatedResources?.storage).toBe('3Mi');
      expect(c.status?.allocatedResourceStatuses?.storage).toBeUndefined();
      expect((c.status?.conditions ?? []).map((x) => x.type)).toEqual([]);
    });
    expect((await env.client.resource('PersistentVolume').get(pvName)).spec?.capacity?.storage).toBe('3Mi');
  });

  it('WaitForFirstConsumer: RESOURCE_EXHAUSTED on the selected node clears the selection so the scheduler can choose again', async () => {
    await boundClaim('r4'); // something allocated, so that the whole capacity no longer fits
    await env.client
      .resource('StorageClass')
      .create(storageClass('late', { volumeBindingMode: 'WaitForFirstConsumer' }));
    await claims().create({
      ...claim('r5', 'late', '64Mi'),
      metadata: { name: 'r5', namespace: 'default', annotations: { 'volume.kubernetes.io/selected-node': 'n1' } },
    });
    await eventually(async () => {
      const c = await claims().get('r5', { namespace: 'default' });
      expect(c.metadata?.annotations?.['volume.kubernetes.io/selected-node']).toBeUndefined();
    });
    const failed = (await eventsFor(env.client, 'default', 'r5')).find((e) => e.reason === 'ProvisioningFailed');
    expect(failed?.message).toMatch(/RESOURCE_EXHAUSTED/);
  });
});

describe('resizer for a driver that only expands on the node', () => {
  let env2: Env;
  let side: ReturnType<Env['startSidecar']>;
  beforeAll(async () => {
    env2 = await startEnv();
    side = env2.startSidecar({ hideControllerCaps: ['EXPAND_VOLUME'] });
    await env2.client.resource('StorageClass').create(storageClass('sc'));
  });
  afterAll(async () => env2?.close());

  it('records the new size on the PV and leaves the rest to the node (FileSystemResizePending), without ControllerExpandVolume', async () => {
    const api = env2.client.resource('PersistentVolumeClaim');
    const c = await api.create(claim('n1', 'sc', '1Mi'));
    await eventually(async () => expect((await api.get('n1', { namespace: 'default' })).status?.phase).toBe('Bound'));
    await api.patch('n1', 'merge', { spec: { resources: { requests: { storage: '2Mi' } } } }, { namespace: 'default' });
    await eventually(async () => {
      const got = await api.get('n1', { namespace: 'default' });
      expect(got.status?.conditions?.find((x) => x.type === 'FileSystemResizePending')?.status).toBe('True');
    });
    expect(
      (await env2.client.resource('PersistentVolume').get(`pvc-${c.metadata!.uid!}`)).spec?.capacity?.storage,
    ).toBe('2Mi');
    expect(side.csi.expands).toEqual([]);
  });
});
