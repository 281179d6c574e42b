import type { DeleteVolumeRequest__Output, DeleteVolumeResponse } from '../../proto/types.js';
import { crashPoint } from '../crash.js';
import type { HostpathDriver } from '../driver.js';
import { failedPrecondition, missing } from '../errors.js';
import type { VolumeRecord } from '../state.js';
import { commit, refuseMountedData, removeVolumeData } from '../volume-data.js';

/**
 * DeleteVolume; an unknown volume is already deleted. Crash-consistent: every refusal is decided
 * first; then the intent (`pending: 'delete'`) is written durably, the data removed and the record
 * dropped. A crash in between leaves an intent that start-up (or the retry) finishes.
 */
export async function deleteVolume(d: HostpathDriver, req: DeleteVolumeRequest__Output): Promise<DeleteVolumeResponse> {
  if (!req.volumeId) throw missing('volume_id');
  return d.locks.run(`vol:${req.volumeId}`, async () => {
    const v = d.volumes[req.volumeId];
    // A pending creation is no volume yet: only its own call (or start-up) settles it.
    if (!v || v.pending === 'create') return {};
    if (!v.pending) {
      await refuseInUse(d, v);
      await commit(d, () => (v.pending = 'delete'), () => delete v.pending);
      crashPoint('DeleteVolume:intent');
    }
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

/** Removes the data (and stray loop devices), then the record. Used by the retry and by start-up. */
export async function finishDelete(d: HostpathDriver, v: VolumeRecord): Promise<void> {
  await removeVolumeData(d, v);
  crashPoint('DeleteVolume:data-removed');
  await commit(d, () => delete d.volumes[v.id], () => (d.volumes[v.id] = v));
  crashPoint('DeleteVolume:settled');
}
