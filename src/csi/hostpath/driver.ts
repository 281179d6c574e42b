import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type * as grpc from '@grpc/grpc-js';
import type { Logger } from '../../util/log.js';
import type { Volume, VolumeCondition } from '../proto/types.js';
import { notFound, toServiceError } from './errors.js';
import { exists } from './fsops.js';
import { KeyedMutex } from './mutex.js';
import { dataLayout, parseState, STATE_FILE, StateStore, type SnapshotRecord, type VolumeRecord } from './state.js';

export const DEFAULT_DRIVER_NAME = 'hostpath.csi.stowage.io';
export const TOPOLOGY_KEY = 'topology.hostpath.csi.stowage.io/node';
export const VENDOR_VERSION = '0.1.0';

export interface HostpathConfig {
  readonly driverName: string;
  readonly nodeId: string;
  readonly stateDir: string;
  readonly enableAttach: boolean;
  /** 0 = no limit (CSI: max_volumes_per_node 0 means the CO decides). */
  readonly maxVolumesPerNode: number;
  /** Total bytes all volumes may take; undefined = unlimited (bounded only by the disk). */
  readonly capacityBytes: number | undefined;
  /**
   * Shared storage (a test stand-in for a storage array): volumes carry no topology and may be
   * published to any node; node-side drivers on each host read them through `volumesFrom`.
   */
  readonly sharedStorage?: boolean;
  /** Node side of shared storage: the state dir of the shared-storage driver whose volumes this node mounts. */
  readonly volumesFrom?: string;
}

/**
 * The driver state every RPC works on: configuration, persistent state, per-key locks and
 * paths. Lock keys: `vol:<id>` for anything touching one volume, `snap:<id>` for one snapshot,
 * `vname:<name>` and `sname:<name>` to serialize CreateVolume/CreateSnapshot by name.
 * Records with an intent (`pending`) are not volumes or snapshots yet (or any more): lookups
 * by id or name and lists skip them.
 */
export class HostpathDriver {
  readonly locks = new KeyedMutex();

  private constructor(
    readonly config: HostpathConfig,
    readonly store: StateStore,
    readonly log: Logger,
  ) {}

  /** Loads the state without touching the disk beyond it; `recover` settles what a crash left. */
  static async open(config: HostpathConfig, log: Logger): Promise<HostpathDriver> {
    const store = await StateStore.open(config.stateDir);
    await mkdir(path.join(config.stateDir, 'volumes'), { recursive: true });
    await mkdir(path.join(config.stateDir, 'snapshots'), { recursive: true });
    return new HostpathDriver(config, store, log);
  }

  /** Every volume record, intents included. */
  get volumes(): Record<string, VolumeRecord> {
    return this.store.data.volumes;
  }
  /** Every snapshot record, intents included. */
  get snapshots(): Record<string, SnapshotRecord> {
    return this.store.data.snapshots;
  }

  /** The volume `id`, unless absent or only an intent. */
  volume(id: string): VolumeRecord | undefined {
    const v = this.volumes[id];
    return v && !v.pending ? v : undefined;
  }
  liveVolumes(): VolumeRecord[] {
    return Object.values(this.volumes).filter((v) => !v.pending);
  }
  /** The snapshot `id`, unless absent or only an intent. */
  snapshot(id: string): SnapshotRecord | undefined {
    const s = this.snapshots[id];
    return s && !s.pending ? s : undefined;
  }
  liveSnapshots(): SnapshotRecord[] {
    return Object.values(this.snapshots).filter((s) => !s.pending);
  }

  volumePath(id: string): string {
    const rec = this.volumes[id];
    const shared = this.config.volumesFrom !== undefined && rec !== undefined && !rec.ephemeral;
    return path.join(shared ? this.config.volumesFrom! : this.config.stateDir, 'volumes', id);
  }

  /**
   * Node side of shared storage: takes the storage driver's current record of `id` (its kind, size
   * and the nodes it is published to), keeping this node's own staging and publication records.
   * A no-op without `volumesFrom`, or when the storage driver does not know the volume.
   */
  async adoptSharedVolume(id: string): Promise<void> {
    if (this.config.volumesFrom === undefined) return;
    let text: string;
    try {
      text = await readFile(path.join(this.config.volumesFrom, STATE_FILE), 'utf8');
    } catch {
      return;
    }
    const theirs = parseState(text).volumes[id];
    if (!theirs || theirs.pending) return;
    const mine = this.volumes[id];
    this.volumes[id] = { ...theirs, staged: mine?.staged ?? {}, published: mine?.published ?? {} };
    await this.store.save();
  }
  snapshotPath(id: string): string {
    return path.join(this.config.stateDir, 'snapshots', id);
  }

  getVolume(id: string): VolumeRecord {
    const v = this.volume(id);
    if (!v) throw notFound(`volume ${id} does not exist`);
    return v;
  }

  /** Bytes allocated to volumes, counting those being created (reserved) or deleted (not yet freed). */
  allocatedBytes(): number {
    let sum = 0;
    for (const v of Object.values(this.volumes)) sum += v.capacityBytes;
    return sum;
  }

  topology(): { segments: Record<string, string> } {
    return { segments: { [TOPOLOGY_KEY]: this.config.nodeId } };
  }

  toCsiVolume(v: VolumeRecord): Volume {
    const out: Volume = {
      volumeId: v.id,
      capacityBytes: v.capacityBytes,
      volumeContext: { 'hostpath.csi.stowage.io/kind': v.kind },
      accessibleTopology: this.config.sharedStorage ? [] : [this.topology()],
    };
    if (v.contentSource?.kind === 'snapshot')
      out.contentSource = { snapshot: { snapshotId: v.contentSource.snapshotId } };
    if (v.contentSource?.kind === 'volume') out.contentSource = { volume: { volumeId: v.contentSource.volumeId } };
    return out;
  }

  /** Abnormal when the backing directory or file has gone missing under us. */
  async condition(v: VolumeRecord): Promise<VolumeCondition> {
    if (await exists(this.volumePath(v.id))) return { abnormal: false, message: 'volume is healthy' };
    return {
      abnormal: true,
      message: `backing ${dataLayout(v) === 'file' ? 'file' : 'directory'} ${this.volumePath(v.id)} is missing`,
    };
  }

  /** Nodes the volume is published to: ControllerPublish records, else this node when node-published. */
  publishedNodes(v: VolumeRecord): string[] {
    const nodes = new Set(Object.keys(v.attachments));
    if (Object.keys(v.published).length > 0 || Object.keys(v.staged).length > 0) nodes.add(this.config.nodeId);
    return [...nodes].sort();
  }
}

/**
 * Adapts an async handler to grpc-js: a thrown CsiStatusError is sent with its code, anything
 * else as INTERNAL; every failure is logged at debug level with the method.
 */
export function unary<Req, Res>(
  log: Logger,
  method: string,
  fn: (req: Req) => Promise<Res>,
): grpc.handleUnaryCall<Req, Res> {
  return (call, callback) => {
    fn(call.request).then(
      (res) => callback(null, res),
      (e: unknown) => {
        const err = toServiceError(e);
        log.debug('call failed', { method, code: err.code, details: err.details });
        callback(err as grpc.ServiceError);
      },
    );
  };
}
