import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claim, DRIVER, eventually, NODE, startEnv, storageClass, TOPOLOGY_KEY, type Env } from './csi-sidecar-kit.js';

const MiB = 1024 * 1024;
let env: Env;
beforeAll(async () => {
  env = await startEnv({ capacityBytes: 64 * MiB });
  env.startSidecar({ capacity: { namespace: 'kube-system', pollMs: 200 } });
});
afterAll(async () => env?.close());

const caps = async () => (await env.client.resource('CSIStorageCapacity').list({ namespace: 'kube-system' })).items;

describe('storage capacity tracking', () => {
  it('publishes one CSIStorageCapacity per WaitForFirstConsumer class and segment, follows usage, and removes it with the class', async () => {
    await env.client
      .resource('StorageClass')
      .create(storageClass('late', { volumeBindingMode: 'WaitForFirstConsumer' }));
    await env.client.resource('StorageClass').create(storageClass('now'));
    const first = await eventually(async () => {
      const items = await caps();
      expect(items.length).toBe(1);
      return items[0]!;
    });
    expect(first.storageClassName).toBe('late');
    expect(first.nodeTopology).toEqual({ matchLabels: { [TOPOLOGY_KEY]: NODE } });
    expect(first.capacity).toBe('64Mi');
    expect(first.metadata?.labels).toEqual({
      'csi.storage.k8s.io/drivername': DRIVER,
      'csi.storage.k8s.io/managed-by': 'external-provisioner',
    });

    await env.client.resource('PersistentVolumeClaim').create(claim('used', 'now', '8Mi'));
    await eventually(async () => expect((await caps())[0]?.capacity).toBe('56Mi'));

    await env.client.resource('StorageClass').delete('late');
    await eventually(async () => expect(await caps()).toEqual([]));
  });
});
