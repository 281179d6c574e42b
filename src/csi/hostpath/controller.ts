import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import type { ControllerHandlers, ControllerServiceCapability, CreateVolumeRequest__Output } from '../proto/types.js';
import { TOPOLOGY_KEY, unary, type HostpathDriver } from './driver.js';
import {
  alreadyExists,
  failedPrecondition,
  invalidArgument,
  missing,
  notFound,
  resourceExhausted,
  unimplemented,
} from './errors.js';
import { copyData, createData, exists, filesystemStats, growFile, removeData } from './fsops.js';
import { detachLoop, findLoopByBackingFile } from '../../mount/loop.js';
import { mountsOfSource } from '../../mount/mountinfo.js';
import { fsTypeUnsupportedReason, isFsType, minimumBytes, syncFilesystem } from './filesystem.js';
import { dataLayout, type AccessKind, type ContentSource, type VolumeRecord } from './state.js';
import { snapshotHandlers } from './snapshots.js';
import {
  capacityCompatible,
  chooseCapacity,
  paginate,
  parseCapability,
  parseCreateCapabilities,
  topologyAllows,
  unsupportedReason,
  type ParsedCapability,
} from './validate.js';

/** Controller capabilities; PUBLISH_UNPUBLISH_VOLUME only when attach is enabled. */
export function controllerCapabilities(enableAttach: boolean): ControllerServiceCapability[] {
  const types = [
    'CREATE_DELETE_VOLUME',
    'PUBLISH_UNPUBLISH_VOLUME',
    'LIST_VOLUMES',
    'GET_CAPACITY',
    'CREATE_DELETE_SNAPSHOT',
    'LIST_SNAPSHOTS',
    'CLONE_VOLUME',
    'EXPAND_VOLUME',
    'LIST_VOLUMES_PUBLISHED_NODES',
    'GET_VOLUME',
    'VOLUME_CONDITION',
    'SINGLE_NODE_MULTI_WRITER',
  ] as const;
  return types.filter((t) => enableAttach || t !== 'PUBLISH_UNPUBLISH_VOLUME').map((type) => ({ rpc: { type } }));
}

function sameSource(a: ContentSource | undefined, b: ContentSource | undefined): boolean {
  if (!a || !b) return a === b;
  if (a.kind === 'snapshot' && b.kind === 'snapshot') return a.snapshotId === b.snapshotId;
  if (a.kind === 'volume' && b.kind === 'volume') return a.volumeId === b.volumeId;
  return false;
}

function parseSource(req: CreateVolumeRequest__Output): ContentSource | undefined {
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

/**
 * The fsType a CreateVolume asks for: '' (a directory volume, as the upstream hostpath driver
 * keeps every mount volume) or one supported filesystem, the same in every capability.
 */
async function requestedFsType(caps: readonly ParsedCapability[]): Promise<string> {
  const types = new Set(caps.map((c) => c.fsType).filter((t) => t !== ''));
  if (types.size > 1) throw invalidArgument(`volume_capabilities ask for different mount.fs_type values: ${[...types].join(', ')}`);
  const i = caps.findIndex((c) => c.fsType !== '');
  if (i < 0) return '';
  const why = await fsTypeUnsupportedReason(caps[i]!.fsType, `volume_capabilities[${i}].mount.fs_type`);
  if (why) throw invalidArgument(why);
  return caps[i]!.fsType;
}

/** Why a volume cannot be used with this capability's fs_type (ValidateVolumeCapabilities, GetCapacity). */
async function fsTypeMismatch(c: ParsedCapability, field: string, v?: VolumeRecord): Promise<string | undefined> {
  if (c.fsType === '') return undefined;
  const why = await fsTypeUnsupportedReason(c.fsType, field);
  if (why || !v) return why;
  if (v.fsType !== c.fsType) return `volume ${v.id} ${v.fsType ? `has a ${v.fsType} filesystem` : 'is a directory volume without a filesystem'}, not ${c.fsType}`;
  return undefined;
}

export function controllerHandlers(d: HostpathDriver): ControllerHandlers {
  const log = d.log;
  const { config } = d;

  const checkKind = (v: VolumeRecord, kind: AccessKind, field: string): void => {
    if (v.kind !== kind) throw invalidArgument(`${field}: volume ${v.id} is a ${v.kind} volume, not ${kind}`);
  };

  interface Source {
    readonly path: string;
    readonly kind: AccessKind;
    readonly fsType: string;
    readonly bytes: number;
    readonly lock: string;
    /** Mounted filesystems of a source volume, flushed before its file is copied. */
    readonly mounted: readonly string[];
  }
  /** The data to copy into a new volume, its kind and minimum size; NOT_FOUND when the source is gone. */
  const resolveSource = (src: ContentSource): Source => {
    if (src.kind === 'snapshot') {
      const s = d.snapshots[src.snapshotId];
      if (!s) throw notFound(`source snapshot ${src.snapshotId} does not exist`);
      return { path: d.snapshotPath(s.id), kind: s.kind, fsType: s.fsType ?? '', bytes: s.sizeBytes, lock: `snap:${s.id}`, mounted: [] };
    }
    const v = d.volumes[src.volumeId];
    if (!v) throw notFound(`source volume ${src.volumeId} does not exist`);
    const mounted = v.fsType ? Object.keys(v.staged) : [];
    return { path: d.volumePath(v.id), kind: v.kind, fsType: v.fsType ?? '', bytes: v.capacityBytes, lock: `vol:${v.id}`, mounted };
  };

  return {
    CreateVolume: unary(log, 'CreateVolume', async (req) => {
      if (!req.name) throw missing('name');
      const caps = parseCreateCapabilities(req.volumeCapabilities);
      const kind = caps[0]!.kind;
      const fsType = kind === 'mount' ? await requestedFsType(caps) : '';
      const source = parseSource(req);
      if (!topologyAllows(req.accessibilityRequirements, TOPOLOGY_KEY, config.nodeId)) {
        throw resourceExhausted(`accessibility_requirements exclude node ${config.nodeId}`);
      }
      return d.locks.run(`vname:${req.name}`, async () => {
        const existing = Object.values(d.volumes).find((v) => v.name === req.name);
        if (existing) {
          if (existing.kind !== kind) throw alreadyExists(`volume ${req.name} exists as a ${existing.kind} volume`);
          // An empty fs_type with a content source takes the source's filesystem.
          if (fsType ? existing.fsType !== fsType : existing.fsType && !existing.contentSource) {
            throw alreadyExists(`volume ${req.name} exists ${existing.fsType ? `with a ${existing.fsType} filesystem` : 'as a directory volume'}`);
          }
          if (!capacityCompatible(existing.capacityBytes, req.capacityRange)) {
            throw alreadyExists(`volume ${req.name} exists with ${existing.capacityBytes} bytes, outside the requested range`);
          }
          if (!sameSource(existing.contentSource, source)) throw alreadyExists(`volume ${req.name} exists with a different content source`);
          return { volume: d.toCsiVolume(existing) };
        }
        const id = randomUUID();
        const create = async (src?: Source): Promise<VolumeRecord> => {
          if (src && src.kind !== kind) throw invalidArgument(`volume_content_source is a ${src.kind} source, the request asks for ${kind}`);
          if (src && fsType && src.fsType !== fsType) {
            throw invalidArgument(`volume_content_source ${src.fsType ? `has a ${src.fsType} filesystem` : 'is a directory volume'}, the request asks for mount.fs_type ${fsType}`);
          }
          // A clone or restore keeps the source's filesystem (the copy is of its device's bytes).
          const volFsType = src ? src.fsType : fsType;
          const layout = dataLayout({ kind, fsType: volFsType });
          // A filesystem has a smallest size (XFS: 300 MiB): a smaller request gets that much, within its limit.
          const fsMin = isFsType(volFsType) ? minimumBytes(volFsType) : 0;
          const size = chooseCapacity(req.capacityRange, config.capacityBytes, Math.max(src?.bytes ?? 0, fsMin));
          if (config.capacityBytes !== undefined && d.allocatedBytes() + size > config.capacityBytes) {
            throw resourceExhausted(`not enough capacity: ${size} bytes asked, ${config.capacityBytes - d.allocatedBytes()} free`);
          }
          d.reserved.set(id, size);
          const dst = d.volumePath(id);
          try {
            if (src) {
              // A mounted source is copied live (as the upstream hostpath driver does); flushing
              // its filesystem first makes the copy at least as recent as the call.
              for (const m of src.mounted) await syncFilesystem(m);
              await copyData(layout, src.path, dst);
              // The filesystem of a grown clone is grown at its next staging.
              if (layout === 'file') await growFile(dst, size);
            } else {
              await createData(layout, dst, size);
            }
          } catch (e) {
            await rm(dst, { recursive: true, force: true }).catch(() => undefined);
            throw e;
          } finally {
            d.reserved.delete(id);
          }
          const rec: VolumeRecord = {
            id,
            name: req.name,
            kind,
            ...(volFsType ? { fsType: volFsType } : {}),
            capacityBytes: size,
            createdAtMs: Date.now(),
            parameters: { ...req.parameters },
            attachments: {},
            staged: {},
            published: {},
            ...(source ? { contentSource: source } : {}),
          };
          d.volumes[id] = rec;
          await d.store.save();
          log.info('volume created', { id, name: req.name, kind, fsType: volFsType, bytes: size, source: source ? JSON.stringify(source) : '' });
          return rec;
        };
        let rec: VolumeRecord;
        if (source) {
          const src = resolveSource(source);
          rec = await d.locks.run(src.lock, async () => create(resolveSource(source)));
        } else {
          rec = await create();
        }
        return { volume: d.toCsiVolume(rec) };
      });
    }),

    DeleteVolume: unary(log, 'DeleteVolume', async (req) => {
      if (!req.volumeId) throw missing('volume_id');
      return d.locks.run(`vol:${req.volumeId}`, async () => {
        const v = d.volumes[req.volumeId];
        if (!v) return {};
        const users = [...Object.keys(v.attachments).map((n) => `published to node ${n}`), ...Object.keys(v.staged).map((p) => `staged at ${p}`), ...Object.keys(v.published).map((p) => `published at ${p}`)];
        if (users.length > 0) throw failedPrecondition(`volume ${v.id} is in use: ${users.join(', ')}`);
        // A loop device nothing records any more (e.g. left by a crash) would pin the deleted file.
        const file = d.volumePath(v.id);
        if (dataLayout(v) === 'file' && (await exists(file))) {
          const loops = await findLoopByBackingFile(file);
          // Detaching a mounted loop device only marks it for autoclear; the file stays in use.
          for (const dev of loops) {
            const m = await mountsOfSource(dev);
            if (m.length > 0) throw failedPrecondition(`volume ${v.id} is still mounted from ${dev} at ${m.map((x) => x.mountPoint).join(', ')}`);
          }
          for (const dev of loops) await detachLoop(dev);
          const left = await findLoopByBackingFile(file);
          if (left.length > 0) throw failedPrecondition(`volume ${v.id} still has loop devices ${left.join(', ')}`);
        }
        await removeData(d.volumePath(v.id));
        delete d.volumes[v.id];
        await d.store.save();
        log.info('volume deleted', { id: v.id, name: v.name });
        return {};
      });
    }),

    ControllerPublishVolume: unary(log, 'ControllerPublishVolume', async (req) => {
      if (!config.enableAttach) throw unimplemented('ControllerPublishVolume is not supported (attach is disabled)');
      if (!req.volumeId) throw missing('volume_id');
      if (!req.nodeId) throw missing('node_id');
      const cap = parseCapability(req.volumeCapability, 'volume_capability');
      return d.locks.run(`vol:${req.volumeId}`, async () => {
        const v = d.getVolume(req.volumeId);
        if (req.nodeId !== config.nodeId) throw notFound(`node ${req.nodeId} does not exist (this driver serves node ${config.nodeId})`);
        checkKind(v, cap.kind, 'volume_capability');
        const why = unsupportedReason(cap);
        if (why) throw invalidArgument(why);
        const existing = v.attachments[req.nodeId];
        if (existing) {
          if (existing.readOnly !== req.readonly) throw alreadyExists(`volume ${v.id} is already published to ${req.nodeId} with readonly=${existing.readOnly}`);
          return { publishContext: {} };
        }
        if (config.maxVolumesPerNode > 0) {
          const count = Object.values(d.volumes).filter((x) => x.attachments[req.nodeId]).length;
          if (count >= config.maxVolumesPerNode) throw resourceExhausted(`node ${req.nodeId} already has ${count} volumes (max ${config.maxVolumesPerNode})`);
        }
        v.attachments[req.nodeId] = { readOnly: req.readonly };
        await d.store.save();
        return { publishContext: {} };
      });
    }),

    ControllerUnpublishVolume: unary(log, 'ControllerUnpublishVolume', async (req) => {
      if (!config.enableAttach) throw unimplemented('ControllerUnpublishVolume is not supported (attach is disabled)');
      if (!req.volumeId) throw missing('volume_id');
      return d.locks.run(`vol:${req.volumeId}`, async () => {
        const v = d.volumes[req.volumeId];
        // Spec: an unknown volume or node can be regarded as unpublished → OK.
        if (!v) return {};
        if (req.nodeId) delete v.attachments[req.nodeId];
        else v.attachments = {};
        await d.store.save();
        return {};
      });
    }),

    ValidateVolumeCapabilities: unary(log, 'ValidateVolumeCapabilities', async (req) => {
      if (!req.volumeId) throw missing('volume_id');
      if (req.volumeCapabilities.length === 0) throw missing('volume_capabilities');
      const v = d.getVolume(req.volumeId);
      const caps = req.volumeCapabilities.map((c, i) => parseCapability(c, `volume_capabilities[${i}]`));
      for (const [i, c] of caps.entries()) {
        if (c.kind !== v.kind) return { message: `volume ${v.id} is a ${v.kind} volume, not ${c.kind}` };
        const why = unsupportedReason(c) ?? (await fsTypeMismatch(c, `volume_capabilities[${i}].mount.fs_type`, v));
        if (why) return { message: why };
      }
      return {
        confirmed: { volumeContext: req.volumeContext, volumeCapabilities: req.volumeCapabilities, parameters: req.parameters, mutableParameters: req.mutableParameters },
        message: '',
      };
    }),

    ListVolumes: unary(log, 'ListVolumes', async (req) => {
      const ids = Object.keys(d.volumes).sort();
      const page = paginate(ids, req.maxEntries, req.startingToken);
      const entries = [];
      for (const id of page.ids) {
        const v = d.volumes[id];
        if (!v) continue;
        entries.push({ volume: d.toCsiVolume(v), status: { publishedNodeIds: d.publishedNodes(v), volumeCondition: await d.condition(v) } });
      }
      return { entries, nextToken: page.nextToken };
    }),

    GetCapacity: unary(log, 'GetCapacity', async (req) => {
      const segs = req.accessibleTopology?.segments;
      if (segs && segs[TOPOLOGY_KEY] !== undefined && segs[TOPOLOGY_KEY] !== config.nodeId) return { availableCapacity: 0 };
      for (const [i, c] of req.volumeCapabilities.entries()) {
        const p = parseCapability(c, `volume_capabilities[${i}]`);
        if (unsupportedReason(p) || (await fsTypeMismatch(p, `volume_capabilities[${i}].mount.fs_type`))) return { availableCapacity: 0 };
      }
      const available =
        config.capacityBytes !== undefined
          ? Math.max(0, config.capacityBytes - d.allocatedBytes())
          : (await filesystemStats(config.stateDir)).availableBytes;
      return { availableCapacity: available, maximumVolumeSize: { value: available } };
    }),

    ControllerGetCapabilities: unary(log, 'ControllerGetCapabilities', async () => ({ capabilities: controllerCapabilities(config.enableAttach) })),

    ...snapshotHandlers(d),

    ControllerExpandVolume: unary(log, 'ControllerExpandVolume', async (req) => {
      if (!req.volumeId) throw missing('volume_id');
      if (!req.capacityRange) throw missing('capacity_range');
      return d.locks.run(`vol:${req.volumeId}`, async () => {
        const v = d.getVolume(req.volumeId);
        if (req.volumeCapability) checkKind(v, parseCapability(req.volumeCapability, 'volume_capability').kind, 'volume_capability');
        const size = chooseCapacity(req.capacityRange, config.capacityBytes);
        // Never shrink; a smaller request is already satisfied.
        if (size <= v.capacityBytes) return { capacityBytes: v.capacityBytes, nodeExpansionRequired: false };
        if (config.capacityBytes !== undefined && d.allocatedBytes() - v.capacityBytes + size > config.capacityBytes) {
          throw resourceExhausted(`not enough capacity to grow volume ${v.id} to ${size} bytes`);
        }
        const layout = dataLayout(v);
        if (layout === 'file') await growFile(d.volumePath(v.id), size);
        v.capacityBytes = size;
        await d.store.save();
        log.info('volume expanded', { id: v.id, bytes: size });
        // A loop device must re-read its size on the node (NodeExpandVolume), and a filesystem
        // volume's filesystem grow into it; a directory has no size to grow.
        return { capacityBytes: size, nodeExpansionRequired: layout === 'file' };
      });
    }),

    ControllerGetVolume: unary(log, 'ControllerGetVolume', async (req) => {
      if (!req.volumeId) throw missing('volume_id');
      const v = d.getVolume(req.volumeId);
      return { volume: d.toCsiVolume(v), status: { publishedNodeIds: d.publishedNodes(v), volumeCondition: await d.condition(v) } };
    }),

    ControllerModifyVolume: unary(log, 'ControllerModifyVolume', async () => {
      throw unimplemented('ControllerModifyVolume is not supported');
    }),
  };
}
