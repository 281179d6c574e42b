import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import type {
  CreateSnapshotRequest__Output,
  CreateSnapshotResponse,
  DeleteSnapshotRequest__Output,
  DeleteSnapshotResponse,
  ListSnapshotsRequest__Output,
  ListSnapshotsResponse,
  Snapshot,
} from '../../proto/types.js';
import type { HostpathDriver } from '../driver.js';
import { alreadyExists, missing } from '../errors.js';
import { syncFilesystem } from '../filesystem.js';
import { copyData } from '../fsops.js';
import { dataLayout, type SnapshotRecord } from '../state.js';
import { paginate } from '../validate.js';
import { createUnderIntent, deleteUnderIntent } from '../intent.js';

// A snapshot is a full copy of the volume's data (directory tree, or sparse file) under
// stateDir/snapshots, ready to use as soon as CreateSnapshot returns. Lock keys: `sname:<name>`
// then `vol:<source>` to create; `snap:<id>` to delete or restore. Both follow intent.ts.

function toCsiSnapshot(s: SnapshotRecord): Snapshot {
  return {
    snapshotId: s.id,
    sourceVolumeId: s.sourceVolumeId,
    sizeBytes: s.sizeBytes,
    creationTime: { seconds: Math.floor(s.createdAtMs / 1000), nanos: (s.createdAtMs % 1000) * 1_000_000 },
    readyToUse: true,
  };
}

export async function createSnapshot(
  d: HostpathDriver,
  req: CreateSnapshotRequest__Output,
): Promise<CreateSnapshotResponse> {
  if (!req.name) throw missing('name');
  if (!req.sourceVolumeId) throw missing('source_volume_id');
  return d.locks.run(`sname:${req.name}`, async () => {
    const existing = d.liveSnapshots().find((s) => s.name === req.name);
    if (existing) {
      if (existing.sourceVolumeId !== req.sourceVolumeId) {
        throw alreadyExists(`snapshot ${req.name} exists for source volume ${existing.sourceVolumeId}`);
      }
      return { snapshot: toCsiSnapshot(existing) };
    }
    return d.locks.run(`vol:${req.sourceVolumeId}`, async () => {
      const v = d.getVolume(req.sourceVolumeId);
      const id = randomUUID();
      const rec: SnapshotRecord = {
        id,
        name: req.name,
        sourceVolumeId: v.id,
        kind: v.kind,
        ...(v.fsType ? { fsType: v.fsType } : {}),
        sizeBytes: v.capacityBytes,
        createdAtMs: Date.now(),
      };
      await createUnderIntent(d, {
        rpc: 'CreateSnapshot',
        records: d.snapshots,
        rec,
        make: async () => {
          // A mounted filesystem volume is copied live; flush it first (see CreateVolume).
          if (v.fsType) for (const m of Object.keys(v.staged)) await syncFilesystem(m);
          await copyData(dataLayout(v), d.volumePath(v.id), d.snapshotPath(id));
        },
        unmake: () => rm(d.snapshotPath(id), { recursive: true, force: true }),
      });
      d.log.info('snapshot created', { id, name: req.name, source: v.id });
      return { snapshot: toCsiSnapshot(rec) };
    });
  });
}

/** DeleteSnapshot; an unknown snapshot is already deleted. Intent, copy removed, record dropped. */
export async function deleteSnapshot(
  d: HostpathDriver,
  req: DeleteSnapshotRequest__Output,
): Promise<DeleteSnapshotResponse> {
  if (!req.snapshotId) throw missing('snapshot_id');
  return d.locks.run(`snap:${req.snapshotId}`, async () => {
    const s = d.snapshots[req.snapshotId];
    if (!s || s.pending === 'create') return {};
    await finishSnapshotDelete(d, s);
    return {};
  });
}

/** Deletes under an intent: the copy, then the record. Also how start-up settles an intent. */
export async function finishSnapshotDelete(d: HostpathDriver, s: SnapshotRecord): Promise<void> {
  await deleteUnderIntent(d, {
    rpc: 'DeleteSnapshot',
    records: d.snapshots,
    rec: s,
    remove: () => rm(d.snapshotPath(s.id), { recursive: true, force: true }),
  });
}

export async function listSnapshots(
  d: HostpathDriver,
  req: ListSnapshotsRequest__Output,
): Promise<ListSnapshotsResponse> {
  let all = d.liveSnapshots();
  if (req.snapshotId) all = all.filter((s) => s.id === req.snapshotId);
  if (req.sourceVolumeId) all = all.filter((s) => s.sourceVolumeId === req.sourceVolumeId);
  const byId = new Map(all.map((s) => [s.id, s]));
  const page = paginate([...byId.keys()].sort(), req.maxEntries, req.startingToken);
  return { entries: page.ids.map((id) => ({ snapshot: toCsiSnapshot(byId.get(id)!) })), nextToken: page.nextToken };
}
