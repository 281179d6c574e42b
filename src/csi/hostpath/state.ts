import { mkdir, open, readdir, readFile, rename, unlink } from 'node:fs/promises';
import path from 'node:path';
import { crashPoint } from './crash.js';

export const ACCESS_KINDS = ['mount', 'block'] as const;
/** How a volume is stored: a directory (mount) or a sparse file behind a loop device (block). */
export type AccessKind = (typeof ACCESS_KINDS)[number];

/**
 * How a volume's data is kept under stateDir/volumes: a directory (a mount volume without an
 * fsType) or a sparse file (a block volume, or a filesystem volume: a mount volume with an fsType,
 * formatted behind a loop device when staged).
 */
export type DataLayout = 'directory' | 'file';

export function dataLayout(v: { readonly kind: AccessKind; readonly fsType?: string | undefined }): DataLayout {
  return v.kind === 'block' || v.fsType ? 'file' : 'directory';
}

export type ContentSource = { kind: 'snapshot'; snapshotId: string } | { kind: 'volume'; volumeId: string };

/** A NodeStageVolume that succeeded: for mount volumes the staging path is a bind mount of the data. */
export interface StageRecord {
  readonly stagingPath: string;
}

/** A NodePublishVolume that succeeded. */
export interface PublishRecord {
  readonly targetPath: string;
  readonly readOnly: boolean;
  readonly stagingPath: string;
  readonly mountFlags: readonly string[];
}

/**
 * An intent recorded durably before acting on the disk and cleared after: a record with `pending`
 * set is invisible to RPCs other than the one finishing it; start-up settles it (see recover.ts).
 */
export type Pending = 'create' | 'delete';
export const PENDING = ['create', 'delete'] as const satisfies readonly Pending[];

export interface VolumeRecord {
  readonly id: string;
  pending?: Pending;
  readonly name: string;
  readonly kind: AccessKind;
  /** Mount volumes only: the filesystem on the backing file. Absent = a directory volume (older state files have none). */
  readonly fsType?: string;
  capacityBytes: number;
  readonly createdAtMs: number;
  readonly contentSource?: ContentSource;
  readonly parameters: Readonly<Record<string, string>>;
  /** ControllerPublishVolume records, by node id. */
  attachments: Record<string, { readOnly: boolean }>;
  /** By staging path. */
  staged: Record<string, StageRecord>;
  /** By target path. */
  published: Record<string, PublishRecord>;
  /** Created by an ephemeral NodePublishVolume; deleted at the NodeUnpublishVolume of its last target. */
  readonly ephemeral?: true;
}

export interface SnapshotRecord {
  readonly id: string;
  pending?: Pending;
  readonly name: string;
  readonly sourceVolumeId: string;
  readonly kind: AccessKind;
  /** The source volume's fsType: a restore is a filesystem volume of the same type. */
  readonly fsType?: string;
  readonly sizeBytes: number;
  readonly createdAtMs: number;
}

export interface DriverStateData {
  version: 1;
  volumes: Record<string, VolumeRecord>;
  snapshots: Record<string, SnapshotRecord>;
}

export const STATE_FILE = 'state.json';

export function emptyState(): DriverStateData {
  return { version: 1, volumes: {}, snapshots: {} };
}

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

/** Parses the persisted JSON; refuses (throws) anything that is not our format rather than guessing. */
export function parseState(text: string): DriverStateData {
  const raw: unknown = JSON.parse(text);
  if (!isRecord(raw) || raw.version !== 1 || !isRecord(raw.volumes) || !isRecord(raw.snapshots)) {
    throw new Error('hostpath state: not a version 1 state file');
  }
  for (const [id, v] of Object.entries(raw.volumes)) {
    if (
      !isRecord(v) ||
      v.id !== id ||
      typeof v.name !== 'string' ||
      !ACCESS_KINDS.includes(v.kind as AccessKind) ||
      typeof v.capacityBytes !== 'number' ||
      (v.fsType !== undefined && typeof v.fsType !== 'string')
    ) {
      throw new Error(`hostpath state: bad volume record ${id}`);
    }
    if (v.pending !== undefined && !PENDING.includes(v.pending as Pending))
      throw new Error(`hostpath state: bad volume record ${id}`);
    v.attachments = isRecord(v.attachments) ? v.attachments : {};
    v.staged = isRecord(v.staged) ? v.staged : {};
    v.published = isRecord(v.published) ? v.published : {};
    v.parameters = isRecord(v.parameters) ? v.parameters : {};
  }
  for (const [id, s] of Object.entries(raw.snapshots)) {
    if (
      !isRecord(s) ||
      s.id !== id ||
      typeof s.name !== 'string' ||
      typeof s.sourceVolumeId !== 'string' ||
      (s.fsType !== undefined && typeof s.fsType !== 'string') ||
      (s.pending !== undefined && !PENDING.includes(s.pending as Pending))
    ) {
      throw new Error(`hostpath state: bad snapshot record ${id}`);
    }
  }
  return raw as unknown as DriverStateData;
}

/** Temp files of state writes: `state.json.tmp-<pid>`. */
const isStateTemp = (name: string): boolean => name.startsWith(`${STATE_FILE}.tmp-`);

/**
 * The driver's persistent state: in memory, written as JSON to `<stateDir>/state.json` after every
 * change (temp file + fsync + rename + fsync of the directory, so a crash or power loss leaves the
 * old or the new file, never half of one, and a completed save is never undone).
 * Saves are serialized; each writes the latest in-memory state.
 */
export class StateStore {
  private saving: Promise<void> = Promise.resolve();
  private waiting: Promise<void> | undefined;
  private constructor(
    readonly dir: string,
    readonly data: DriverStateData,
    /** False when there was no state file: a fresh driver, or one whose state was lost. */
    readonly loaded: boolean,
  ) {}

  /** Loads the state; temp files a killed write left behind are removed first. */
  static async open(dir: string): Promise<StateStore> {
    await mkdir(dir, { recursive: true });
    for (const name of (await readdir(dir)).filter(isStateTemp)) await unlink(path.join(dir, name));
    let data: DriverStateData;
    let loaded = true;
    try {
      data = parseState(await readFile(path.join(dir, STATE_FILE), 'utf8'));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      data = emptyState();
      loaded = false;
    }
    return new StateStore(dir, data, loaded);
  }

  /**
   * Persists the current state. Resolves once a write that includes every change so far is
   * durable: a caller replies only after that. Group commit: saves asked for while a write is
   * still waiting to start share that write (it serializes the state when it starts), so a burst
   * of RPCs costs two writes, not one each.
   */
  save(): Promise<void> {
    if (this.waiting) return this.waiting;
    const next = this.saving
      .catch(() => undefined)
      .then(() => {
        this.waiting = undefined; // changes from here on need the next write
        return this.write(JSON.stringify(this.data));
      });
    this.waiting = next;
    this.saving = next;
    return next;
  }

  private async write(text: string): Promise<void> {
    const file = path.join(this.dir, STATE_FILE);
    const tmp = `${file}.tmp-${process.pid}`;
    try {
      const fh = await open(tmp, 'w', 0o600);
      try {
        await fh.writeFile(text);
        await fh.sync();
      } finally {
        await fh.close();
      }
      crashPoint('state:tmp-written');
      await rename(tmp, file);
    } catch (e) {
      await unlink(tmp).catch(() => undefined);
      throw e;
    }
    crashPoint('state:renamed');
    // The rename is durable only once the directory entry is.
    const dh = await open(this.dir, 'r');
    try {
      await dh.sync();
    } finally {
      await dh.close();
    }
  }
}
