import { mkdir, readdir, rm, stat, truncate, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createVolume } from './controller/create-volume.js';
import { blockCap, createRequest, MiB, openTestDriver, type TestDriver } from './driver.test-kit.js';
import { recover } from './recover.js';
import { STATE_FILE, type VolumeRecord } from './state.js';

const record = (id: string, o: Partial<VolumeRecord> = {}): VolumeRecord => ({
  id,
  name: `n-${id}`,
  kind: 'mount',
  capacityBytes: MiB,
  createdAtMs: 1,
  parameters: {},
  attachments: {},
  staged: {},
  published: {},
  ...o,
});

describe('recover (start-up after a crash)', () => {
  let t: TestDriver;
  afterEach(async () => t?.close());

  it('rolls back intents to create, finishes intents to delete, removes unnamed data and temp files', async () => {
    t = await openTestDriver();
    const live = (await createVolume(t.d, createRequest('live'))).volume!.volumeId!;
    t.d.volumes.c = record('c', { pending: 'create' });
    t.d.volumes.x = record('x', { pending: 'delete' });
    t.d.snapshots.s = {
      id: 's',
      pending: 'create',
      name: 'snap',
      sourceVolumeId: live,
      kind: 'mount',
      sizeBytes: MiB,
      createdAtMs: 1,
    };
    await t.d.store.save();
    for (const id of ['c', 'x', 'stray']) await mkdir(path.join(t.d.volumePath(id), 'half'), { recursive: true });
    await mkdir(t.d.snapshotPath('s'));
    await writeFile(path.join(t.stateDir, `${STATE_FILE}.tmp-4242`), '');

    const d = await t.reopen();
    await recover(d);
    expect(Object.keys((await t.onDisk()).volumes)).toEqual([live]);
    expect((await t.onDisk()).snapshots).toEqual({});
    expect(await readdir(path.join(t.stateDir, 'volumes'))).toEqual([live]);
    expect(await readdir(path.join(t.stateDir, 'snapshots'))).toEqual([]);
    expect((await readdir(t.stateDir)).sort()).toEqual(['snapshots', STATE_FILE, 'volumes']);
  });

  it('grows a file volume to its recorded size (an expansion recorded, not carried out)', async () => {
    t = await openTestDriver();
    const id = (await createVolume(t.d, createRequest('b', { volumeCapabilities: [blockCap()] }))).volume!.volumeId!;
    t.d.volumes[id]!.capacityBytes = 16 * MiB;
    await t.d.store.save();
    await truncate(t.d.volumePath(id), 8 * MiB);
    await recover(await t.reopen());
    expect((await stat(t.d.volumePath(id))).size).toBe(16 * MiB);
  });

  it('without a state file, data in volumes/ is a lost state, not a leak: it is kept', async () => {
    t = await openTestDriver();
    await rm(path.join(t.stateDir, STATE_FILE), { force: true });
    await mkdir(t.d.volumePath('precious'));
    await recover(await t.reopen());
    expect(await readdir(path.join(t.stateDir, 'volumes'))).toEqual(['precious']);
  });
});
