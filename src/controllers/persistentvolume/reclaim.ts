/**
 * reclaimVolume and its two long-running operations, recycle and delete (Kubernetes v1.30).
 * The deleter decision is pure (`findDeleter`): Stowage, like a default kube-controller-manager,
 * knows only the hostPath deleter (which refuses anything not under /tmp/); a volume provisioned by
 * an external provisioner (a CSI driver) is left to it — the CSI sidecar is the hand-off point.
 */
import { unbindVolume, updateVolumePhaseWithEvent, volumeEvent } from './bind.js';
import type { SyncContext } from './context.js';
import { isPodTerminated } from './sync-claim.js';
import { ANN_PROVISIONED_BY, ANN_MIGRATED_TO, REASONS, claimRefKey, type PersistentVolume } from './types.js';

const HOST_PATH_PLUGIN = 'kubernetes.io/host-path';
/** Volume sources whose KCM plugin exists but cannot delete ("no deletable volume plugin matched"). */
const NON_DELETABLE_SOURCES = ['nfs', 'csi', 'local', 'iscsi', 'fc'] as const;
// Unanchored on purpose: Kubernetes' hostPath deleter uses MatchString("/tmp/.+").
const HOST_PATH_DELETABLE = /\/tmp\/.+/;

export type Deleter = { kind: 'external' } | { kind: 'hostPath'; path: string } | { kind: 'error'; message: string };

/** findDeletablePlugin + NewDeleter + the hostPath path check, as one pure decision. */
export function findDeleter(volume: PersistentVolume, honorPVReclaimPolicy: boolean): Deleter {
  const name = volume.metadata?.name ?? '';
  const provisionedBy = volume.metadata?.annotations?.[ANN_PROVISIONED_BY];
  let plugin: 'hostPath' | null = null;
  if (provisionedBy) {
    if (provisionedBy === HOST_PATH_PLUGIN) plugin = 'hostPath';
    else if (provisionedBy.startsWith('kubernetes.io/'))
      return { kind: 'error', message: `no volume plugin matched name: ${provisionedBy}` };
    else return { kind: 'external' };
  }
  if (plugin === null) {
    if (honorPVReclaimPolicy && (volume.metadata?.annotations?.[ANN_MIGRATED_TO] || volume.spec?.csi))
      return { kind: 'external' };
    const spec = volume.spec ?? {};
    if (spec.hostPath) plugin = 'hostPath';
    else {
      const known = NON_DELETABLE_SOURCES.some((s) => spec[s] != null);
      const why = known ? 'no deletable volume plugin matched' : 'no volume plugin matched';
      return { kind: 'error', message: `error getting deleter volume plugin for volume "${name}": ${why}` };
    }
  }
  const hp = volume.spec?.hostPath;
  if (!hp)
    return {
      kind: 'error',
      message: `failed to create deleter for volume "${name}": spec.PersistentVolumeSource.HostPath is nil`,
    };
  if (!HOST_PATH_DELETABLE.test(hp.path))
    return { kind: 'error', message: `host_path deleter only supports /tmp/.+ but received provided ${hp.path}` };
  return { kind: 'hostPath', path: hp.path };
}

export async function reclaimVolume(c: SyncContext, volume: PersistentVolume): Promise<void> {
  // A CSI-migrated volume belongs to the external provisioner.
  if (volume.metadata?.annotations?.[ANN_MIGRATED_TO]) return;
  const name = volume.metadata?.name ?? '';
  const uid = volume.metadata?.uid ?? '';
  const policy = volume.spec?.persistentVolumeReclaimPolicy;
  switch (policy) {
    case 'Retain':
      return;
    case 'Recycle':
      c.fx.scheduleOperation(`recycle-${name}[${uid}]`, () => recycleVolumeOperation(c, volume));
      return;
    case 'Delete':
      c.fx.scheduleOperation(`delete-${name}[${uid}]`, () => deleteVolumeOperation(c, volume));
      return;
    default:
      await updateVolumePhaseWithEvent(
        c,
        volume,
        'Failed',
        'Warning',
        REASONS.VolumeUnknownReclaimPolicy,
        'Volume has unrecognized PersistentVolumeReclaimPolicy',
      );
  }
}

/** isVolumeReleased: bound (with UID) to a claim that is gone, re-created, or bound elsewhere. */
export function isVolumeReleased(c: SyncContext, volume: PersistentVolume): boolean {
  const ref = volume.spec?.claimRef;
  if (!ref || !ref.uid) return false;
  const claim = c.cache.getClaim(claimRefKey(ref));
  if (claim && claim.metadata?.uid === ref.uid) {
    const vn = claim.spec?.volumeName ?? '';
    return vn !== '' && vn !== volume.metadata?.name;
  }
  return true;
}

async function readLive(c: SyncContext, name: string): Promise<PersistentVolume | null> {
  try {
    return await c.fx.liveVolume(name);
  } catch {
    // Kubernetes logs and ends the operation; the next sync schedules it again.
    return null;
  }
}

export async function recycleVolumeOperation(c: SyncContext, volume: PersistentVolume): Promise<void> {
  const live = await readLive(c, volume.metadata?.name ?? '');
  if (!live || !isVolumeReleased(c, live)) return;
  const ref = volume.spec?.claimRef;
  const pods = ref
    ? [
        ...new Set(
          c.listers
            .podsForClaim(ref.namespace ?? '', ref.name ?? '')
            .filter((p) => !isPodTerminated(p))
            .map((p) => `${p.metadata?.namespace ?? ''}/${p.metadata?.name ?? ''}`),
        ),
      ].sort()
    : [];
  const claimCached = ref ? c.cache.getClaim(claimRefKey(ref)) !== undefined : false;
  if (pods.length > 0 && !claimCached) {
    volumeEvent(c, volume, 'Normal', REASONS.VolumeFailedRecycle, `Volume is used by pods: ${pods.join(',')}`);
    return;
  }
  try {
    if (!c.fx.recycle) {
      await updateVolumePhaseWithEvent(
        c,
        live,
        'Failed',
        'Warning',
        REASONS.VolumeFailedRecycle,
        'No recycler plugin found for the volume!',
      );
      return;
    }
    try {
      await c.fx.recycle(live);
    } catch (e) {
      await updateVolumePhaseWithEvent(
        c,
        live,
        'Failed',
        'Warning',
        REASONS.VolumeFailedRecycle,
        `Recycle failed: ${e instanceof Error ? e.message : String(e)}`,
      );
      return;
    }
    volumeEvent(c, live, 'Normal', REASONS.VolumeRecycled, 'Volume recycled');
    await unbindVolume(c, live);
  } catch {
    // A failed status write is retried by the next syncVolume, as in Kubernetes.
  }
}

export async function deleteVolumeOperation(c: SyncContext, volume: PersistentVolume): Promise<void> {
  const live = await readLive(c, volume.metadata?.name ?? '');
  if (!live) return;
  if (!c.options.honorPVReclaimPolicy && live.metadata?.deletionTimestamp) return;
  if (!isVolumeReleased(c, live)) return;
  const d = findDeleter(volume, c.options.honorPVReclaimPolicy);
  let failure: string | null = null;
  if (d.kind === 'external') return; // the external provisioner (CSI sidecar) deletes it
  if (d.kind === 'error') failure = d.message;
  else if (c.fx.removeHostPathData) {
    try {
      await c.fx.removeHostPathData(d.path);
    } catch (e) {
      failure = e instanceof Error ? e.message : String(e);
    }
  }
  if (failure !== null) {
    // The controller keeps retrying in every syncVolume despite Failed; the rejection drives backoff.
    await updateVolumePhaseWithEvent(c, volume, 'Failed', 'Warning', REASONS.VolumeFailedDelete, failure);
    throw new Error(failure);
  }
  try {
    await c.fx.deleteVolume(volume.metadata?.name ?? '', volume.metadata?.uid);
  } catch {
    // Kubernetes tries the deletion again on the next update of the volume.
  }
}
