import type { CreateVolumeRequest__Output } from '../../proto/types.js';
import type { HostpathDriver } from '../driver.js';
import { invalidArgument, missing, notFound } from '../errors.js';
import type { AccessKind, ContentSource } from '../state.js';

export function sameSource(a: ContentSource | undefined, b: ContentSource | undefined): boolean {
  if (!a || !b) return a === b;
  if (a.kind === 'snapshot' && b.kind === 'snapshot') return a.snapshotId === b.snapshotId;
  if (a.kind === 'volume' && b.kind === 'volume') return a.volumeId === b.volumeId;
  return false;
}

export function parseSource(req: CreateVolumeRequest__Output): ContentSource | undefined {
  const s = req.volumeContentSource;
  if (!s) return undefined;
  if (s.snapshot) {
    if (!s.snapshot.snapshotId) throw missing('volume_content_source.snapshot.snapshot_id');
    return { kind: 'snapshot', snapshotId: s.snapshot.snapshotId };
  }
  if (s.volume) {
    if (!s.volume.volumeId) throw missing('volume_content_source.volume.volume_id');
    return { kind: 'volume', volumeId: s.volume.volumeId };
  }
  throw invalidArgument('volume_content_source must name a snapshot or a volume');
}

/** The data to copy into a new volume. */
export interface Source {
  readonly path: string;
  readonly kind: AccessKind;
  readonly fsType: string;
  readonly bytes: number;
  readonly lock: string;
  /** Mounted filesystems of a source volume, flushed before its file is copied. */
  readonly mounted: readonly string[];
}

/** The data to copy into a new volume, its kind and minimum size; NOT_FOUND when the source is gone. */
export function resolveSource(d: HostpathDriver, src: ContentSource): Source {
  if (src.kind === 'snapshot') {
    const s = d.snapshot(src.snapshotId);
    if (!s) throw notFound(`source snapshot ${src.snapshotId} does not exist`);
    return {
      path: d.snapshotPath(s.id),
      kind: s.kind,
      fsType: s.fsType ?? '',
      bytes: s.sizeBytes,
      lock: `snap:${s.id}`,
      mounted: [],
    };
  }
  const v = d.volume(src.volumeId);
  if (!v) throw notFound(`source volume ${src.volumeId} does not exist`);
  const mounted = v.fsType ? Object.keys(v.staged) : [];
  return {
    path: d.volumePath(v.id),
    kind: v.kind,
    fsType: v.fsType ?? '',
    bytes: v.capacityBytes,
    lock: `vol:${v.id}`,
    mounted,
  };
}
