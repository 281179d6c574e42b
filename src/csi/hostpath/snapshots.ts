import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import type { ControllerHandlers, ListSnapshotsResponse, Snapshot } from '../proto/types.js';
import { unary, type HostpathDriver } from './driver.js';
import { alreadyExists, missing } from './errors.js';
import { copyData } from './fsops.js';
import { syncFilesystem } from './filesystem.js';
import { dataLayout, type SnapshotRecord } from './state.js';
import { paginate } from './validate.js';

function toCsiSnapshot(s: SnapshotRecord): Snapshot {
  return {
    snapshotId: s.id,
    sourceVolumeId: s.sourceVolumeId,
    sizeBytes: s.sizeBytes,
    creationTime: { seconds: Math.floor(s.createdAtMs / 1000), nanos: (s.createdAtMs % 1000) * 1_000_000 },
    readyToUse: true,
  };
}

/**
 * CreateSnapshot / DeleteSnapshot / ListSnapshots. A snapshot is a full copy of the volume's data
 * (directory tree, or sparse file) under stateDir/snapshots, ready to use as soon as it returns.
 * Lock keys: `sname:<name>` then `vol:<source>` to create; `snap:<id>` to delete or restore.
 */
export function snapshotHandlers(d: HostpathDriver): Pick<ControllerHandlers, 'CreateSnapshot' | 'DeleteSnapshot' | 'ListSnapshots'> {
  const log = d.log;
  return {
    CreateSnapshot: unary(log, 'CreateSnapshot', async (req) => {
      if (!req.name) throw missing('name');
      if (!req.sourceVolumeId) throw missing('source_volume_id');
      return d.locks.run(`sname:${req.name}`, async () => {
        const existing = Object.values(d.snapshots).find((s) => s.name === req.name);
        if (existing) {
          if (existing.sourceVolumeId !== req.sourceVolumeId) {
            throw alreadyExists(`snapshot ${req.name} exists for source volume ${existing.sourceVolumeId}`);
          }
          return { snapshot: toCsiSnapshot(existing) };
        }
        return d.locks.run(`vol:${req.sourceVolumeId}`, async () => {
          const v = d.getVolume(req.sourceVolumeId);
          const id = randomUUID();
          try {
            // A mounted filesystem volume is copied live; flush it first (see CreateVolume).
            if (v.fsType) for (const m of Object.keys(v.staged)) await syncFilesystem(m);
            await copyData(dataLayout(v), d.volumePath(v.id), d.snapshotPath(id));
          } catch (e) {
            await rm(d.snapshotPath(id), { recursive: true, force: true }).catch(() => undefined);
            throw e;
          }
          const rec: SnapshotRecord = { id, name: req.name, sourceVolumeId: v.id, kind: v.kind, ...(v.fsType ? { fsType: v.fsType } : {}), sizeBytes: v.capacityBytes, createdAtMs: Date.now() };
          d.snapshots[id] = rec;
          await d.store.save();
          log.info('snapshot created', { id, name: req.name, source: v.id });
          return { snapshot: toCsiSnapshot(rec) };
        });
      });
    }),

    DeleteSnapshot: unary(log, 'DeleteSnapshot', async (req) => {
      if (!req.snapshotId) throw missing('snapshot_id');
      return d.locks.run(`snap:${req.snapshotId}`, async () => {
        const s = d.snapshots[req.snapshotId];
        if (!s) return {};
        await rm(d.snapshotPath(s.id), { recursive: true, force: true });
        delete d.snapshots[s.id];
        await d.store.save();
        return {};
      });
    }),

    ListSnapshots: unary(log, 'ListSnapshots', async (req): Promise<ListSnapshotsResponse> => {
      let all = Object.values(d.snapshots);
      if (req.snapshotId) all = all.filter((s) => s.id === req.snapshotId);
      if (req.sourceVolumeId) all = all.filter((s) => s.sourceVolumeId === req.sourceVolumeId);
      const byId = new Map(all.map((s) => [s.id, s]));
      const page = paginate([...byId.keys()].sort(), req.maxEntries, req.startingToken);
      return { entries: page.ids.map((id) => ({ snapshot: toCsiSnapshot(byId.get(id)!) })), nextToken: page.nextToken };
    }),
  };
}
