import type { DeleteVolumeRequest__Output, DeleteVolumeResponse } from '../../proto/types.js';
import type { HostpathDriver } from '../driver.js';
import { failedPrecondition, missing } from '../errors.js';
import type { VolumeRecord } from '../state.js';
import { deleteUnderIntent } from '../intent.js';
import { refuseMountedData, removeVolumeData } from '../volume-data.js';

/**
 * DeleteVolume; an unknown volume is already deleted. Every refusal is decided before the intent
 * to delete is recorded (intent.ts); a crash after it is finished by start-up or the retry.
 */
export async function deleteVolume(d: HostpathDriver, req: DeleteVolumeRequest__Output): Promise<DeleteVolumeResponse> {
  if (!req.volumeId) throw missing('volume_id');
  return d.locks.run(`vol:${req.volumeId}`, async () => {
    const v = d.volumes[req.volumeId];
    // A pending creation is no volume yet: only its own call (or start-up) settles it.
    if (!v || v.pending === 'create') return {};
    if (!v.pending) await refuseInUse(d, v);
    await finishDelete(d, v);
    d.log.info('volume deleted', { id: v.id, name: v.name });
    return {};
  });
}

/** FAILED_PRECONDITION while anything still uses the volume: a record of its use, or a mount. */
async function refuseInUse(d: HostpathDriver, v: VolumeRecord): Promise<void> {
  const users = [
    ...Object.keys(v.attachments).map((n) => `published to node ${n}`),
    ...Object.keys(v.staged).map((p) => `staged at ${p}`),
    ...Object.keys(v.published).map((p) => `published at ${p}`),
  ];
  if (users.length > 0) throw failedPrecondition(`volume ${v.id} is in use: ${users.join(', ')}`);
  await refuseMountedData(d, v);
}

/** Deletes under an intent: data (and stray loop devices) first, then the record. Also how start-up settles an intent. */
export async function finishDelete(d: HostpathDriver, v: VolumeRecord): Promise<void> {
  await deleteUnderIntent(d, { rpc: 'DeleteVolume', records: d.volumes, rec: v, remove: () => removeVolumeData(d, v) });
}
