import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findMount } from '../../mount/mountinfo.js';
import { createVolume } from './controller/create-volume.js';
import { controllerPublishVolume, controllerUnpublishVolume } from './controller/publish.js';
import { createRequest, dirCap, openTestDriver, type TestDriver } from './driver.test-kit.js';
import { pluginCapabilities } from './identity.js';
import { nodePublishVolume, nodeUnpublishVolume } from './node/publish.js';
import { nodeStageVolume, nodeUnstageVolume } from './node/stage.js';

const notRoot = process.getuid?.() !== 0;

describe('shared storage (--shared-storage on the storage side, --volumes-from on each node)', () => {
  let storage: TestDriver | undefined;
  let nodes: TestDriver[] = [];
  afterEach(async () => {
    for (const n of nodes) await n.close();
    await storage?.close();
    nodes = [];
    storage = undefined;
  });

  it('creates volumes without topology or accessibility constraints, and publishes them to any node', async () => {
    storage = await openTestDriver({ nodeId: 'storage', enableAttach: true, sharedStorage: true });
    expect(pluginCapabilities(true).map((c) => c.service?.type)).not.toContain('VOLUME_ACCESSIBILITY_CONSTRAINTS');
    const v = (
      await createVolume(
        storage.d,
        createRequest('v', {
          accessibilityRequirements: { requisite: [{ segments: { other: 'n9' } }], preferred: [] },
        }),
      )
    ).volume!;
    expect(v.accessibleTopology).toEqual([]);
    await controllerPublishVolume(storage.d, {
      volumeId: v.volumeId!,
      nodeId: 'n1',
      volumeCapability: dirCap(),
      readonly: false,
      secrets: {},
      volumeContext: {},
    });
    expect((await storage.onDisk()).volumes[v.volumeId!]?.attachments).toEqual({ n1: { readOnly: false } });
  });

  it.skipIf(notRoot)(
    'a node stages only volumes published to it, and mounts the storage data itself: what one node wrote, the next reads',
    async () => {
      storage = await openTestDriver({ nodeId: 'storage', enableAttach: true, sharedStorage: true });
      const n1 = await openTestDriver({ nodeId: 'n1', enableAttach: true, volumesFrom: storage.stateDir });
      const n2 = await openTestDriver({ nodeId: 'n2', enableAttach: true, volumesFrom: storage.stateDir });
      nodes = [n1, n2];
      const id = (await createVolume(storage.d, createRequest('v'))).volume!.volumeId!;
      const publishTo = (nodeId: string) =>
        controllerPublishVolume(storage!.d, {
          volumeId: id,
          nodeId,
          volumeCapability: dirCap(),
          readonly: false,
          secrets: {},
          volumeContext: {},
        });
      const stage = (n: TestDriver) =>
        nodeStageVolume(n.d, {
          volumeId: id,
          stagingTargetPath: path.join(n.stateDir, '..', 'staging'),
          volumeCapability: dirCap(),
          publishContext: {},
          secrets: {},
          volumeContext: {},
        });
      const publish = (n: TestDriver) =>
        nodePublishVolume(n.d, {
          volumeId: id,
          stagingTargetPath: path.join(n.stateDir, '..', 'staging'),
          targetPath: path.join(n.stateDir, '..', 'target'),
          volumeCapability: dirCap(),
          readonly: false,
          publishContext: {},
          secrets: {},
          volumeContext: {},
        });
      const teardown = async (n: TestDriver) => {
        await nodeUnpublishVolume(n.d, { volumeId: id, targetPath: path.join(n.stateDir, '..', 'target') });
        await nodeUnstageVolume(n.d, { volumeId: id, stagingTargetPath: path.join(n.stateDir, '..', 'staging') });
      };

      await expect(stage(n1)).rejects.toThrow(/not published to node n1/);
      await publishTo('n1');
      await stage(n1);
      await publish(n1);
      writeFileSync(path.join(n1.stateDir, '..', 'target', 'f'), 'from n1');
      await teardown(n1);
      expect(await findMount(path.join(n1.stateDir, '..', 'target'))).toBeUndefined();
      await controllerUnpublishVolume(storage.d, { volumeId: id, nodeId: 'n1', secrets: {} });

      await publishTo('n2');
      await stage(n2);
      await publish(n2);
      expect(readFileSync(path.join(n2.stateDir, '..', 'target', 'f'), 'utf8')).toBe('from n1');
      expect(n2.d.volumePath(id)).toBe(storage.d.volumePath(id));
      await teardown(n2);
    },
  );
});
