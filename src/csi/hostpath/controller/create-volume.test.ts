import { readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { blockCap, createRequest, MiB, openTestDriver, type TestDriver } from '../driver.test-kit.js';
import { createVolume } from './create-volume.js';

describe('createVolume', () => {
  let t: TestDriver;
  afterEach(async () => t?.close());

  it('replies with a volume whose settled record is on disk and whose data exists', async () => {
    t = await openTestDriver();
    const { volume } = await createVolume(t.d, createRequest('a'));
    const id = volume!.volumeId!;
    const rec = (await t.onDisk()).volumes[id];
    expect(rec).toMatchObject({ id, name: 'a', kind: 'mount', capacityBytes: 8 * MiB });
    expect(rec!.pending).toBeUndefined();
    expect((await stat(t.d.volumePath(id))).isDirectory()).toBe(true);
  });

  it('is idempotent by name: the same call returns the same volume and creates nothing', async () => {
    t = await openTestDriver();
    const a = await createVolume(t.d, createRequest('a', { volumeCapabilities: [blockCap()] }));
    const b = await createVolume(t.d, createRequest('a', { volumeCapabilities: [blockCap()] }));
    expect(b.volume!.volumeId).toBe(a.volume!.volumeId);
    expect(await readdir(path.join(t.stateDir, 'volumes'))).toEqual([a.volume!.volumeId]);
    await expect(createVolume(t.d, createRequest('a'))).rejects.toMatchObject({ grpcCode: 6 }); // ALREADY_EXISTS: block vs mount
  });

  it('a copy that fails rolls back: no record, no data, and the name can be created again', async () => {
    t = await openTestDriver();
    const src = (await createVolume(t.d, createRequest('src'))).volume!.volumeId!;
    await rm(t.d.volumePath(src), { recursive: true }); // cp of a missing source fails
    await expect(
      createVolume(t.d, createRequest('clone', { volumeContentSource: { volume: { volumeId: src } } })),
    ).rejects.toThrow();
    expect(Object.values((await t.onDisk()).volumes).map((v) => v.name)).toEqual(['src']);
    expect(Object.values(t.d.volumes).map((v) => v.name)).toEqual(['src']);
    expect(await readdir(path.join(t.stateDir, 'volumes'))).toEqual([]);
  });

  it('reserves capacity while creating: the intent counts against the limit', async () => {
    t = await openTestDriver({ capacityBytes: 12 * MiB });
    const both = await Promise.allSettled([
      createVolume(t.d, createRequest('a')),
      createVolume(t.d, createRequest('b')),
    ]);
    expect(both.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect(t.d.allocatedBytes()).toBe(8 * MiB);
  });
});
