import { mkdir, readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createRequest, openTestDriver, type TestDriver } from '../driver.test-kit.js';
import { createVolume } from './create-volume.js';
import { deleteVolume } from './delete-volume.js';

const del = (volumeId: string) => ({ volumeId, secrets: {} });

describe('deleteVolume', () => {
  let t: TestDriver;
  afterEach(async () => t?.close());

  it('removes the data and the record; an unknown volume is already deleted', async () => {
    t = await openTestDriver();
    const id = (await createVolume(t.d, createRequest('a'))).volume!.volumeId!;
    await deleteVolume(t.d, del(id));
    expect((await t.onDisk()).volumes).toEqual({});
    expect(await readdir(path.join(t.stateDir, 'volumes'))).toEqual([]);
    await deleteVolume(t.d, del(id));
  });

  it('a volume in use is refused before any intent is recorded', async () => {
    t = await openTestDriver();
    const id = (await createVolume(t.d, createRequest('a'))).volume!.volumeId!;
    t.d.volumes[id]!.staged['/s'] = { stagingPath: '/s' };
    await t.d.store.save();
    await expect(deleteVolume(t.d, del(id))).rejects.toMatchObject({ grpcCode: 9 }); // FAILED_PRECONDITION
    expect((await t.onDisk()).volumes[id]!.pending).toBeUndefined();
  });

  it('finishes a deletion a crash interrupted (an intent on disk, data half removed)', async () => {
    t = await openTestDriver();
    const id = (await createVolume(t.d, createRequest('a'))).volume!.volumeId!;
    await mkdir(path.join(t.d.volumePath(id), 'left'));
    t.d.volumes[id]!.pending = 'delete';
    await t.d.store.save();
    const d2 = await t.reopen();
    expect(d2.volume(id), 'an intent is no volume').toBeUndefined();
    await deleteVolume(d2, del(id));
    expect((await t.onDisk()).volumes).toEqual({});
    expect(await readdir(path.join(t.stateDir, 'volumes'))).toEqual([]);
  });
});
