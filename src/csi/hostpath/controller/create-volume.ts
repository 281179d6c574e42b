import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import type { CreateVolumeRequest__Output, CreateVolumeResponse } from '../../proto/types.js';
import { TOPOLOGY_KEY, type HostpathDriver } from '../driver.js';
import { alreadyExists, invalidArgument, missing, resourceExhausted } from '../errors.js';
import { isFsType, minimumBytes, syncFilesystem } from '../filesystem.js';
import { copyData, createData, growFile } from '../fsops.js';
import { dataLayout, type AccessKind, type ContentSource, type VolumeRecord } from '../state.js';
import { capacityCompatible, chooseCapacity, parseCreateCapabilities, topologyAllows } from '../validate.js';
import { createUnderIntent } from '../intent.js';
import { requestedFsType } from './checks.js';
import { parseSource, resolveSource, sameSource, type Source } from './source.js';

/**
 * CreateVolume, idempotent by name. Crash-consistent (intent.ts): a crash before the reply
 * leaves an intent that start-up rolls back, so the CO's retry creates the volume once.
 */
export async function createVolume(d: HostpathDriver, req: CreateVolumeRequest__Output): Promise<CreateVolumeResponse> {
  if (!req.name) throw missing('name');
  const caps = parseCreateCapabilities(req.volumeCapabilities);
  const kind = caps[0]!.kind;
  const fsType = kind === 'mount' ? await requestedFsType(caps) : '';
  const source = parseSource(req);
  if (!d.config.sharedStorage && !topologyAllows(req.accessibilityRequirements, TOPOLOGY_KEY, d.config.nodeId)) {
    throw resourceExhausted(`accessibility_requirements exclude node ${d.config.nodeId}`);
  }
  return d.locks.run(`vname:${req.name}`, async () => {
    const existing = d.liveVolumes().find((v) => v.name === req.name);
    if (existing) {
      if (existing.kind !== kind) throw alreadyExists(`volume ${req.name} exists as a ${existing.kind} volume`);
      // An empty fs_type with a content source takes the source's filesystem.
      if (fsType ? existing.fsType !== fsType : existing.fsType && !existing.contentSource) {
        throw alreadyExists(
          `volume ${req.name} exists ${existing.fsType ? `with a ${existing.fsType} filesystem` : 'as a directory volume'}`,
        );
      }
      if (!capacityCompatible(existing.capacityBytes, req.capacityRange)) {
        throw alreadyExists(
          `volume ${req.name} exists with ${existing.capacityBytes} bytes, outside the requested range`,
        );
      }
      if (!sameSource(existing.contentSource, source))
        throw alreadyExists(`volume ${req.name} exists with a different content source`);
      return { volume: d.toCsiVolume(existing) };
    }
    const want: Wanted = { req, kind, fsType, source };
    let rec: VolumeRecord;
    if (source) {
      const lock = resolveSource(d, source).lock;
      // Resolved again under the source's lock: it may have gone meanwhile.
      rec = await d.locks.run(lock, async () => create(d, want, resolveSource(d, source)));
    } else {
      rec = await create(d, want);
    }
    return { volume: d.toCsiVolume(rec) };
  });
}

interface Wanted {
  readonly req: CreateVolumeRequest__Output;
  readonly kind: AccessKind;
  readonly fsType: string;
  readonly source: ContentSource | undefined;
}

async function create(d: HostpathDriver, { req, kind, fsType, source }: Wanted, src?: Source): Promise<VolumeRecord> {
  const { config } = d;
  if (src && src.kind !== kind)
    throw invalidArgument(`volume_content_source is a ${src.kind} source, the request asks for ${kind}`);
  if (src && fsType && src.fsType !== fsType) {
    throw invalidArgument(
      `volume_content_source ${src.fsType ? `has a ${src.fsType} filesystem` : 'is a directory volume'}, the request asks for mount.fs_type ${fsType}`,
    );
  }
  // A clone or restore keeps the source's filesystem (the copy is of its device's bytes).
  const volFsType = src ? src.fsType : fsType;
  const layout = dataLayout({ kind, fsType: volFsType });
  // A filesystem has a smallest size (XFS: 300 MiB): a smaller request gets that much, within its limit.
  const fsMin = isFsType(volFsType) ? minimumBytes(volFsType) : 0;
  const size = chooseCapacity(req.capacityRange, config.capacityBytes, Math.max(src?.bytes ?? 0, fsMin));
  if (config.capacityBytes !== undefined && d.allocatedBytes() + size > config.capacityBytes) {
    throw resourceExhausted(
      `not enough capacity: ${size} bytes asked, ${config.capacityBytes - d.allocatedBytes()} free`,
    );
  }
  const id = randomUUID();
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
  const dst = d.volumePath(id);
  // The intent also reserves the capacity until the volume exists.
  await createUnderIntent(d, {
    rpc: 'CreateVolume',
    records: d.volumes,
    rec,
    make: async () => {
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
    },
    unmake: () => rm(dst, { recursive: true, force: true }),
  });
  d.log.info('volume created', {
    id,
    name: req.name,
    kind,
    fsType: volFsType,
    bytes: size,
    source: source ? JSON.stringify(source) : '',
  });
  return rec;
}
