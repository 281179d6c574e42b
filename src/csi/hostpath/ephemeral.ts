import { rm } from 'node:fs/promises';
import { bytesOf } from '../../kube/quantity.js';
import { finishDelete } from './controller/delete-volume.js';
import type { HostpathDriver } from './driver.js';
import { createData } from './fsops.js';
import { createUnderIntent } from './intent.js';
import type { VolumeRecord } from './state.js';

/** The kubelet marks an inline (CSI ephemeral) volume's NodePublishVolume with this volume context key. */
export const EPHEMERAL_CONTEXT_KEY = 'csi.storage.k8s.io/ephemeral';
const DEFAULT_EPHEMERAL_BYTES = 1024 * 1024 * 1024; // accounting only: an ephemeral volume is a directory

export function isEphemeralPublish(ctx: Readonly<Record<string, string>> | undefined): boolean {
  return ctx?.[EPHEMERAL_CONTEXT_KEY] === 'true';
}

/**
 * Ephemeral lifecycle: the volume is created by its first NodePublishVolume (a directory volume
 * named by the kubelet's handle; `size` in the volume attributes, else 1 GiB) under an intent,
 * like CreateVolume, and lives until the NodeUnpublishVolume of its last target. Idempotent. Call
 * under the volume's lock.
 */
export async function ensureEphemeralVolume(
  d: HostpathDriver,
  id: string,
  ctx: Readonly<Record<string, string>>,
): Promise<VolumeRecord> {
  const existing = d.volumes[id];
  if (existing && !existing.pending) return existing;
  const bytes = Number(bytesOf(ctx['size']) ?? BigInt(DEFAULT_EPHEMERAL_BYTES));
  const rec: VolumeRecord = {
    id,
    name: id,
    kind: 'mount',
    capacityBytes: bytes,
    createdAtMs: Date.now(),
    parameters: {},
    attachments: {},
    staged: {},
    published: {},
    ephemeral: true,
  };
  const dst = d.volumePath(id);
  await createUnderIntent(d, {
    rpc: 'CreateVolume',
    records: d.volumes,
    rec,
    make: () => createData('directory', dst, bytes),
    unmake: () => rm(dst, { recursive: true, force: true }),
  });
  d.log.info('ephemeral volume created', { id, bytes });
  return rec;
}

/** Deletes an ephemeral volume nothing publishes any more (under an intent, its data with it). */
export async function releaseEphemeralVolume(d: HostpathDriver, v: VolumeRecord): Promise<void> {
  if (!v.ephemeral || Object.keys(v.published).length > 0) return;
  await finishDelete(d, v);
  d.log.info('ephemeral volume deleted', { id: v.id });
}
