import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createRequest, openTestDriver, type TestDriver } from '../driver.test-kit.js';
import { createVolume } from './create-volume.js';
import { createSnapshot, deleteSnapshot, listSnapshots } from './snapshots.js';

const list = { maxEntries: 0, startingToken: '', sourceVolumeId: '', snapshotId: '', secrets: {} };

describe('snapshots', () => {
  let t: TestDriver;
  afterEach(async () => t?.close());

  it('create is idempotent by name; delete removes copy and record; intents are not listed', async () => {
    t = await openTestDriver();
    const vol = (await createVolume(t.d, createRequest('v'))).volume!.volumeId!;
    const a = await createSnapshot(t.d, { name: 's', sourceVolumeId: vol, secrets: {}, parameters: {} });
    const b = await createSnapshot(t.d, { name: 's', sourceVolumeId: vol, secrets: {}, parameters: {} });
    expect(b.snapshot!.snapshotId).toBe(a.snapshot!.snapshotId);
    const id = a.snapshot!.snapshotId!;
    expect((await t.onDisk()).snapshots[id]!.pending).toBeUndefined();

    t.d.snapshots[id]!.pending = 'delete'; // as a crash after the intent would leave it
    expect((await listSnapshots(t.d, list)).entries).toEqual([]);
    await deleteSnapshot(t.d, { snapshotId: id, secrets: {} });
    expect((await t.onDisk()).snapshots).toEqual({});
    expect(await readdir(path.join(t.stateDir, 'snapshots'))).toEqual([]);
  });
});
