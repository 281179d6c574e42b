import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findMount } from '../../../mount/mountinfo.js';
import { createVolume } from '../controller/create-volume.js';
import { createRequest, dirCap, openTestDriver, type TestDriver } from '../driver.test-kit.js';
import { nodePublishVolume, nodeUnpublishVolume } from './publish.js';

const notRoot = process.getuid?.() !== 0;

describe.skipIf(notRoot)('nodePublishVolume of an ephemeral (inline) volume (root: bind mounts)', () => {
  let t: TestDriver;
  afterEach(async () => t?.close());

  const publish = (volumeId: string, targetPath: string, volumeContext: Record<string, string>) =>
    nodePublishVolume(t.d, {
      volumeId,
      targetPath,
      stagingTargetPath: '',
      volumeCapability: dirCap(),
      readonly: false,
      publishContext: {},
      secrets: {},
      volumeContext,
    });

  it('creates the volume on the fly without staging, durably; deletes it at the last unpublish', async () => {
    t = await openTestDriver();
    const id = 'csi-0123abcd';
    const target = path.join(t.stateDir, '..', 'pod', 'mount');
    await publish(id, target, { 'csi.storage.k8s.io/ephemeral': 'true', size: '2Mi' });
    await publish(id, target, { 'csi.storage.k8s.io/ephemeral': 'true', size: '2Mi' }); // idempotent
    expect(await findMount(target)).toBeDefined();
    const rec = (await t.onDisk()).volumes[id];
    expect(rec).toMatchObject({ ephemeral: true, capacityBytes: 2 * 1024 * 1024, staged: {} });
    expect(rec?.pending).toBeUndefined();
    writeFileSync(path.join(target, 'f'), 'x');
    expect(existsSync(path.join(t.d.volumePath(id), 'f'))).toBe(true);

    await nodeUnpublishVolume(t.d, { volumeId: id, targetPath: target });
    expect(await findMount(target)).toBeUndefined();
    expect((await t.onDisk()).volumes[id]).toBeUndefined();
    expect(existsSync(t.d.volumePath(id))).toBe(false);
  });

  it('a persistent volume still needs staging', async () => {
    t = await openTestDriver();
    const volumeId = (await createVolume(t.d, createRequest('v'))).volume!.volumeId!;
    await expect(publish(volumeId, path.join(t.stateDir, '..', 't'), {})).rejects.toThrow(
      /staging_target_path is required/,
    );
  });
});
