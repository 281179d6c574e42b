/**
 * The deleter half of the external-provisioner: Released PVs of this driver with reclaim policy
 * Delete → DeleteVolume → our finalizer removed → PV deleted. DeleteVolume is idempotent (a gone
 * volume is success), so a crash anywhere in this sequence is repaired by running it again.
 */
import type { PersistentVolume } from 'kubernetes-types/core/v1.js';
import type { EventRecorder } from '../../client/index.js';
import { ignoreNotFound } from '../../util/errors.js';
import { errorMessage, fetchSecrets, type SidecarContext } from './context.js';
import { attachmentOf, decideVolume } from './delete-decide.js';
import { ANN_DELETION_SECRET_NAME, ANN_DELETION_SECRET_NAMESPACE, PROVISIONER_FINALIZER, REASONS } from './names.js';
import { resolveSecretRef, type SecretRef } from './secrets.js';

export interface Deleter {
  /** Reconciles one PV by name. */
  reconcile(name: string, signal: AbortSignal): Promise<void>;
}

export function newDeleter(ctx: SidecarContext, o: { recorder: EventRecorder }): Deleter {
  const { informers, driver, log } = ctx;
  const rec = o.recorder;

  /** The provisioner secret: as recorded on the PV at creation, else from the class if it still exists. */
  const secretRef = (pv: PersistentVolume): SecretRef | undefined => {
    const anns = pv.metadata?.annotations ?? {};
    const name = anns[ANN_DELETION_SECRET_NAME];
    const namespace = anns[ANN_DELETION_SECRET_NAMESPACE];
    if (name !== undefined && namespace !== undefined) return { name, namespace };
    const cls = informers.classes.lister.get(pv.spec?.storageClassName ?? '');
    if (!cls) return undefined;
    return resolveSecretRef('provisioner', cls.parameters ?? {}, {
      pvName: pv.metadata?.name ?? '',
      ...(pv.spec?.claimRef?.namespace ? { pvcNamespace: pv.spec.claimRef.namespace } : {}),
      ...(pv.spec?.claimRef?.name ? { pvcName: pv.spec.claimRef.name } : {}),
    });
  };

  const removeFinalizer = async (name: string, signal: AbortSignal): Promise<PersistentVolume | undefined> => {
    const api = ctx.client.resource('PersistentVolume');
    const pv = await api.getIfExists(name, { signal });
    if (!pv) return undefined;
    const fins = pv.metadata?.finalizers ?? [];
    if (!fins.includes(PROVISIONER_FINALIZER)) return pv;
    pv.metadata = { ...pv.metadata, finalizers: fins.filter((f) => f !== PROVISIONER_FINALIZER) };
    // resourceVersion-checked: a Conflict is retried by the queue.
    return api.update(pv, { signal }).catch(ignoreNotFound);
  };

  const reconcile = async (name: string, signal: AbortSignal): Promise<void> => {
    const pv = informers.volumes.lister.get(name);
    if (!pv) return;
    const d = decideVolume(pv, driver);
    if (d.kind === 'skip') return;
    if (d.kind === 'delete') {
      try {
        if (!ctx.controllerCaps.has('CREATE_DELETE_VOLUME'))
          throw new Error(`driver ${driver} does not support CREATE_DELETE_VOLUME`);
        const va = attachmentOf(name, informers.attachments.lister.list());
        if (va) throw new Error(`persistentvolume ${name} is still attached to node ${va.spec?.nodeName ?? ''}`);
        const secrets = await fetchSecrets(ctx, secretRef(pv), signal);
        await ctx.csi.deleteVolume({ volumeId: d.volumeId, secrets }, { signal, timeoutMs: ctx.csiTimeoutMs });
      } catch (e) {
        if (signal.aborted) throw e;
        rec.event(pv, 'Warning', REASONS.VolumeFailedDelete, errorMessage(e));
        throw e;
      }
      log.info('deleted volume', { pv: name, volumeId: d.volumeId });
    }
    const left = await removeFinalizer(name, signal);
    if (d.kind === 'delete' && left && !left.metadata?.deletionTimestamp) {
      await ctx.client
        .resource('PersistentVolume')
        .deleteIfExists(name, { signal, preconditions: { uid: left.metadata?.uid } });
    }
  };

  return { reconcile };
}
