/**
 * The attacher (external-attacher semantics): VolumeAttachments whose spec.attacher is this driver
 * are attached with ControllerPublishVolume and detached with ControllerUnpublishVolume; results
 * and errors go to the VolumeAttachment status. Drivers without PUBLISH_UNPUBLISH_VOLUME get every
 * attachment marked attached without a call. Keys: `va:<name>` and `pv:<name>`.
 */
import { metaTime } from '../../util/metatime.js';
import type { PersistentVolume } from 'kubernetes-types/core/v1.js';
import type { VolumeAttachment } from 'kubernetes-types/storage/v1.js';
import { ignoreNotFound, NotFoundError } from '../../util/errors.js';
import { errorMessage, fetchSecrets, type SidecarContext } from './context.js';
import { decideAttachment, pvFinalizerAction } from './attach-decide.js';
import { pvCapability } from './capabilities.js';
import { ANN_VA_NODE_ID, attacherFinalizer } from './names.js';

export interface Attacher {
  reconcile(key: string, signal: AbortSignal): Promise<void>;
  /** The finalizer this attacher puts on VolumeAttachments (and PVs). */
  readonly finalizer: string;
}

function now(): string {
  return metaTime();
}

/** Sets an object's finalizers to `change(finalizers)`, resourceVersion-checked (a Conflict requeues); a missing object is left alone. */
async function setFinalizers<T extends { metadata?: { finalizers?: string[] } }>(
  api: {
    get(n: string, o: { signal: AbortSignal }): Promise<T>;
    update(o: T, w: { signal: AbortSignal }): Promise<T>;
  },
  name: string,
  change: (f: string[]) => string[],
  signal: AbortSignal,
): Promise<void> {
  const obj = await api.get(name, { signal }).catch(ignoreNotFound);
  if (!obj) return;
  const before = obj.metadata?.finalizers ?? [];
  const after = change(before);
  if (after.length === before.length && after.every((f, i) => f === before[i])) return;
  obj.metadata = { ...obj.metadata, finalizers: after };
  await api.update(obj, { signal }).catch(ignoreNotFound);
}

type CsiSource = NonNullable<NonNullable<PersistentVolume['spec']>['csi']>;

/** The secret ControllerPublish and ControllerUnpublish get (its namespace defaults to "default"). */
function publishSecretRef(csi: CsiSource): { name: string; namespace: string } | undefined {
  const ref = csi.controllerPublishSecretRef;
  return ref?.name ? { name: ref.name, namespace: ref.namespace ?? 'default' } : undefined;
}

export function newAttacher(ctx: SidecarContext): Attacher {
  const { informers, driver, log } = ctx;
  const finalizer = attacherFinalizer(driver);
  const canPublish = ctx.controllerCaps.has('PUBLISH_UNPUBLISH_VOLUME');
  const vaApi = () => ctx.client.resource('VolumeAttachment');
  const pvApi = () => ctx.client.resource('PersistentVolume');

  const add = (f: string[]): string[] => (f.includes(finalizer) ? f : [...f, finalizer]);
  const remove = (f: string[]): string[] => f.filter((x) => x !== finalizer);

  const patchStatus = (name: string, status: Record<string, unknown>, signal: AbortSignal): Promise<VolumeAttachment> =>
    vaApi().patchStatus(name, 'merge', { status }, { signal });

  const csiNodeId = (nodeName: string): string | undefined =>
    informers.csiNodes.lister.get(nodeName)?.spec?.drivers?.find((d) => d.name === driver)?.nodeID || undefined;
  const nodeIdOf = (nodeName: string): string => {
    const id = csiNodeId(nodeName);
    if (!id) throw new NotFoundError(`CSINode ${nodeName} does not contain driver ${driver}`);
    return id;
  };

  const pvOf = async (name: string, signal: AbortSignal): Promise<PersistentVolume> => {
    const pv = informers.volumes.lister.get(name) ?? (await pvApi().get(name, { signal }));
    if (pv.spec?.csi?.driver !== driver)
      throw new Error(`persistentvolume ${name} is not a CSI volume of driver ${driver}`);
    return pv;
  };

  const attach = async (va: VolumeAttachment, pvName: string, nodeName: string, signal: AbortSignal): Promise<void> => {
    const name = va.metadata?.name ?? '';
    if (!canPublish) {
      await patchStatus(name, { attached: true, attachError: null }, signal);
      return;
    }
    try {
      const pv = await pvOf(pvName, signal);
      await setFinalizers(pvApi(), pvName, add, signal);
      const nodeId = nodeIdOf(nodeName);
      if (va.metadata?.annotations?.[ANN_VA_NODE_ID] !== nodeId) {
        await vaApi().patch(name, 'merge', { metadata: { annotations: { [ANN_VA_NODE_ID]: nodeId } } }, { signal });
      }
      const csi = pv.spec!.csi!;
      const secretRef = publishSecretRef(csi);
      const r = await ctx.csi.controllerPublishVolume(
        {
          volumeId: csi.volumeHandle,
          nodeId,
          volumeCapability: pvCapability(pv, ctx.controllerCaps.has('SINGLE_NODE_MULTI_WRITER')),
          readonly: csi.readOnly ?? false,
          secrets: await fetchSecrets(ctx, secretRef, signal),
          volumeContext: { ...csi.volumeAttributes },
        },
        { signal, timeoutMs: ctx.csiTimeoutMs },
      );
      await patchStatus(
        name,
        { attached: true, attachmentMetadata: { ...r.publishContext }, attachError: null },
        signal,
      );
      log.info('attached', { va: name, pv: pvName, node: nodeName });
    } catch (e) {
      if (signal.aborted) throw e;
      // Only the error is recorded, as external-attacher's saveAttachError: this attach may be a
      // repeat of one that succeeded (a reconcile on a cache that has not seen attached=true yet,
      // or a new leader's), and a failed repeat must not mark an attached volume detached.
      // `attached: false` is written only where the attacher never wrote the field.
      const fresh = await vaApi()
        .get(name, { signal })
        .catch(() => undefined);
      const attachError = { time: now(), message: errorMessage(e) };
      await patchStatus(
        name,
        fresh?.status?.attached === undefined ? { attached: false, attachError } : { attachError },
        signal,
      ).catch(() => undefined);
      throw e;
    }
  };

  const detach = async (va: VolumeAttachment, pvName: string, nodeName: string, signal: AbortSignal): Promise<void> => {
    const name = va.metadata?.name ?? '';
    if (canPublish) {
      try {
        // The CSINode may not list the driver right now (its node agent or driver restarting): the
        // node ID recorded before ControllerPublish still names where the volume was published.
        const nodeId = csiNodeId(nodeName) ?? va.metadata?.annotations?.[ANN_VA_NODE_ID];
        if (!nodeId) {
          // No node ID was ever recorded, so ControllerPublish was never called: nothing to unpublish.
          log.info('detaching an attachment that was never published', { va: name, node: nodeName });
        } else {
          const pv = await pvOf(pvName, signal);
          const csi = pv.spec!.csi!;
          const secretRef = publishSecretRef(csi);
          await ctx.csi.controllerUnpublishVolume(
            { volumeId: csi.volumeHandle, nodeId, secrets: await fetchSecrets(ctx, secretRef, signal) },
            { signal, timeoutMs: ctx.csiTimeoutMs },
          );
        }
      } catch (e) {
        if (signal.aborted) throw e;
        await patchStatus(name, { detachError: { time: now(), message: errorMessage(e) } }, signal).catch(
          () => undefined,
        );
        throw e;
      }
    }
    await patchStatus(name, { attached: false, attachmentMetadata: null, detachError: null }, signal).catch(
      ignoreNotFound,
    );
    await setFinalizers(vaApi(), name, remove, signal);
    log.info('detached', { va: name, pv: pvName, node: nodeName });
  };

  const syncPv = async (name: string, signal: AbortSignal): Promise<void> => {
    const pv = informers.volumes.lister.get(name);
    if (!pv || !canPublish) return;
    const referenced = informers.attachments.lister
      .list()
      .some(
        (va) =>
          va.spec?.attacher === driver &&
          va.spec.source?.persistentVolumeName === name &&
          (va.metadata?.finalizers ?? []).includes(finalizer),
      );
    const action = pvFinalizerAction(pv, driver, finalizer, referenced);
    if (action === 'remove') await setFinalizers(pvApi(), name, remove, signal);
  };

  const syncVa = async (name: string, signal: AbortSignal): Promise<void> => {
    const va = informers.attachments.lister.get(name);
    if (!va) return;
    const d = decideAttachment(va, driver, finalizer);
    switch (d.kind) {
      case 'skip':
        return;
      case 'addFinalizer':
        return setFinalizers(vaApi(), name, add, signal);
      case 'attach':
        return attach(va, d.pvName, d.nodeName, signal);
      case 'detach':
        return detach(va, d.pvName, d.nodeName, signal);
      case 'removeFinalizer':
        return setFinalizers(vaApi(), name, remove, signal);
    }
  };

  return {
    finalizer,
    reconcile: (key, signal) => (key.startsWith('pv:') ? syncPv(key.slice(3), signal) : syncVa(key.slice(3), signal)),
  };
}
