import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findMount } from '../../../mount/mountinfo.js';
import { createVolume } from '../controller/create-volume.js';
import { createRequest, dirCap, openTestDriver, type TestDriver } from '../driver.test-kit.js';
import { nodeStageVolume, nodeUnstageVolume } from './stage.js';

const notRoot = process.getuid?.() !== 0;

describe.skipIf(notRoot)('nodeStageVolume / nodeUnstageVolume (root: bind mounts)', () => {
  let t: TestDriver;
  afterEach(async () => t?.close());

  it('stages once (a repeat changes nothing), records after mounting, and unstages a staging a crash left unrecorded', async () => {
    t = await openTestDriver();
    const volumeId = (await createVolume(t.d, createRequest('v'))).volume!.volumeId!;
    const staging = path.join(t.stateDir, '..', 'staging');
    const req = {
      volumeId,
      stagingTargetPath: staging,
      volumeCapability: dirCap(),
      publishContext: {},
      secrets: {},
      volumeContext: {},
    };
    await nodeStageVolume(t.d, req);
    await nodeStageVolume(t.d, req);
    expect(Object.keys((await t.onDisk()).volumes[volumeId]!.staged)).toEqual([staging]);
    expect(await findMount(staging)).toBeDefined();

    // As a crash between the mount and its record leaves it: mounted, not recorded.
    delete t.d.volumes[volumeId]!.staged[staging];
    await t.d.store.save();
    await nodeUnstageVolume(t.d, { volumeId, stagingTargetPath: staging });
    expect(await findMount(staging)).toBeUndefined();
    expect((await t.onDisk()).volumes[volumeId]!.staged).toEqual({});
  });
});
