import { stat } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { ControllerExpandVolumeRequest__Output } from '../../proto/types.js';
import { blockCap, createRequest, MiB, openTestDriver, type TestDriver } from '../driver.test-kit.js';
import { createVolume } from './create-volume.js';
import { controllerExpandVolume } from './expand-volume.js';

const grow = (volumeId: string, bytes: number): ControllerExpandVolumeRequest__Output => ({
  volumeId,
  capacityRange: { requiredBytes: bytes, limitBytes: 0 },
  secrets: {},
  volumeCapability: null,
});

describe('controllerExpandVolume', () => {
  let t: TestDriver;
  afterEach(async () => t?.close());

  it('a file volume: records the size, grows the file, and says the node must expand — on a repeat too', async () => {
    t = await openTestDriver();
    const id = (await createVolume(t.d, createRequest('b', { volumeCapabilities: [blockCap()] }))).volume!.volumeId!;
    expect(await controllerExpandVolume(t.d, grow(id, 16 * MiB))).toEqual({
      capacityBytes: 16 * MiB,
      nodeExpansionRequired: true,
    });
    expect((await t.onDisk()).volumes[id]!.capacityBytes).toBe(16 * MiB);
    expect((await stat(t.d.volumePath(id))).size).toBe(16 * MiB);
    expect(await controllerExpandVolume(t.d, grow(id, 16 * MiB))).toEqual({
      capacityBytes: 16 * MiB,
      nodeExpansionRequired: true,
    });
  });

  it('a repeat grows a file a crash left at its old size after the new size was recorded', async () => {
    t = await openTestDriver();
    const id = (await createVolume(t.d, createRequest('b', { volumeCapabilities: [blockCap()] }))).volume!.volumeId!;
    t.d.volumes[id]!.capacityBytes = 16 * MiB; // recorded, not carried out
    await controllerExpandVolume(t.d, grow(id, 12 * MiB));
    expect((await stat(t.d.volumePath(id))).size).toBe(16 * MiB);
  });

  it('a directory volume has nothing for the node to grow; a smaller request never shrinks', async () => {
    t = await openTestDriver();
    const id = (await createVolume(t.d, createRequest('d'))).volume!.volumeId!;
    expect(await controllerExpandVolume(t.d, grow(id, 32 * MiB))).toEqual({
      capacityBytes: 32 * MiB,
      nodeExpansionRequired: false,
    });
    expect(await controllerExpandVolume(t.d, grow(id, 8 * MiB))).toEqual({
      capacityBytes: 32 * MiB,
      nodeExpansionRequired: false,
    });
  });
});
