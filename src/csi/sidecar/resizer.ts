/**
 * The resizer (external-resizer semantics): a bound claim of this driver asking for more than its
 * PV has → ControllerExpandVolume → PV capacity → claim status (capacity, or FileSystemResizePending
 * for the node to finish). A failed size is recoverable by lowering the request: the next attempt
 * uses the new request (RecoverVolumeExpansionFailure).
 */
import { metaTime } from '../../util/metatime.js';
import type { PersistentVolume, PersistentVolumeClaim } from 'kubernetes-types/core/v1.js';
import type { EventRecorder } from '../../client/index.js';
import { InvalidError } from '../../util/errors.js';
import { CsiError } from '../client.js';
import { pvCapability } from './capabilities.js';
import { errorMessage, fetchSecrets, type SidecarContext } from './context.js';
import { REASONS } from './names.js';
import { bytesOf, bytesQuantity } from '../../kube/quantity.js';
import {
  CONDITION_CONTROLLER_RESIZE_ERROR,
  CONDITION_FS_RESIZE_PENDING,
  CONDITION_RESIZING,
  FS_RESIZE_PENDING_MESSAGE,
  decideResize,
  isInfeasible,
  withConditions,
} from './resize-decide.js';
import { splitNamespacedKey } from '../../kube/keys.js';

export interface Resizer {
  /** Reconciles one claim by `namespace/name`. */
  reconcile(key: string, signal: AbortSignal): Promise<void>;
}

const nowIso = (): string => metaTime();
const RESIZE_CONDITIONS = [CONDITION_RESIZING, CONDITION_FS_RESIZE_PENDING, CONDITION_CONTROLLER_RESIZE_ERROR];

/** Raises the PV's capacity to `bytes` (never lowers it). */
async function growPv(ctx: SidecarContext, name: string, bytes: bigint, signal: AbortSignal): Promise<void> {
  const api = ctx.client.resource('PersistentVolume');
  const pv = await api.get(name, { signal });
  if ((bytesOf(pv.spec?.capacity?.storage) ?? 0n) >= bytes) return;
  pv.spec = { ...pv.spec, capacity: { ...pv.spec?.capacity, storage: bytesQuantity(bytes) } };
  await api.update(pv, { signal }); // resourceVersion-checked; a Conflict is retried by the queue
}

/** ControllerExpandVolume, or for a node-only driver the trivial resizer (the node does it all). */
async function expandOnDriver(
  ctx: SidecarContext,
  pv: PersistentVolume,
  bytes: bigint,
  signal: AbortSignal,
): Promise<{ bytes: bigint; nodeExpansion: boolean }> {
  if (ctx.nodeOnlyExpansion) return { bytes, nodeExpansion: true };
  const csi = pv.spec!.csi!;
  const ref = csi.controllerExpandSecretRef?.name
    ? { name: csi.controllerExpandSecretRef.name, namespace: csi.controllerExpandSecretRef.namespace ?? 'default' }
    : undefined;
  const r = await ctx.csi.controllerExpandVolume(
    {
      volumeId: csi.volumeHandle,
      capacityRange: { requiredBytes: bytes.toString() },
      secrets: await fetchSecrets(ctx, ref, signal),
      volumeCapability: pvCapability(pv, ctx.controllerCaps.has('SINGLE_NODE_MULTI_WRITER')),
    },
    { signal, timeoutMs: ctx.csiTimeoutMs },
  );
  return { bytes: BigInt(r.capacityBytes || 0) || bytes, nodeExpansion: r.nodeExpansionRequired };
}

export function newResizer(ctx: SidecarContext, o: { recorder: EventRecorder }): Resizer {
  const { informers, driver, log } = ctx;
  const rec = o.recorder;
  const claimsApi = () => ctx.client.resource('PersistentVolumeClaim');

  const patchClaimStatus = (
    claim: PersistentVolumeClaim,
    status: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<PersistentVolumeClaim> =>
    claimsApi().patchStatus(
      claim.metadata?.name ?? '',
      'merge',
      { status },
      { namespace: claim.metadata?.namespace, signal },
    );

  const reconcile = async (key: string, signal: AbortSignal): Promise<void> => {
    if (!ctx.controllerCaps.has('EXPAND_VOLUME') && !ctx.nodeOnlyExpansion) return;
    const [ns, name] = splitNamespacedKey(key);
    const cached = informers.claims.lister.get(ns, name);
    if (!cached) return;
    if (decideResize(cached, informers.volumes.lister.get(cached.spec?.volumeName ?? ''), driver).kind === 'skip')
      return;
    // The cache may trail our own last writes (status, PV capacity); acting on it would repeat an
    // expansion whose idempotent answer no longer says whether the node must finish it. Decide
    // again on fresh objects.
    const claim = await claimsApi().getIfExists(name, { namespace: ns, signal });
    if (!claim) return;
    const pv = await ctx.client.resource('PersistentVolume').getIfExists(claim.spec?.volumeName ?? '', { signal });
    const d = decideResize(claim, pv, driver);
    if (d.kind === 'skip' || !pv) return;
    const pvName = pv.metadata?.name ?? '';
    if (d.kind === 'abandon') {
      log.info('expansion abandoned: request lowered to the current size', { claim: key });
      await patchClaimStatus(
        claim,
        {
          allocatedResources: { storage: bytesQuantity(d.pvBytes) },
          allocatedResourceStatuses: { storage: null },
          conditions: withConditions(claim.status?.conditions, RESIZE_CONDITIONS),
        },
        signal,
      );
      return;
    }

    const target = bytesQuantity(d.bytes);
    let current = await patchClaimStatus(
      claim,
      {
        allocatedResources: { storage: target },
        allocatedResourceStatuses: { storage: 'ControllerResizeInProgress' },
        conditions: withConditions(claim.status?.conditions, RESIZE_CONDITIONS, {
          type: CONDITION_RESIZING,
          nowIso: nowIso(),
        }),
      },
      signal,
    );
    rec.event(claim, 'Normal', REASONS.Resizing, `External resizer is resizing volume ${pvName}`);

    let newBytes: bigint;
    let nodeExpansion: boolean;
    try {
      ({ bytes: newBytes, nodeExpansion } = await expandOnDriver(ctx, pv, d.bytes, signal));
    } catch (e) {
      if (signal.aborted) throw e;
      const msg = `resize volume "${pvName}" by resizer "${driver}" failed: ${errorMessage(e)}`;
      rec.event(claim, 'Warning', REASONS.VolumeResizeFailed, msg);
      const infeasible = e instanceof CsiError && isInfeasible(e.grpcCodeName);
      await patchClaimStatus(
        current,
        {
          allocatedResourceStatuses: { storage: infeasible ? 'ControllerResizeFailed' : 'ControllerResizeInProgress' },
          conditions: withConditions(current.status?.conditions, RESIZE_CONDITIONS, {
            type: CONDITION_CONTROLLER_RESIZE_ERROR,
            message: msg,
            nowIso: nowIso(),
          }),
        },
        signal,
      ).catch((pe: unknown) =>
        log.warn('could not record the resize failure', { claim: key, error: errorMessage(pe) }),
      );
      // Infeasible: the same size will fail again; a changed request re-enqueues the claim.
      if (infeasible) throw new InvalidError(msg, [], { cause: e });
      throw e;
    }

    await growPv(ctx, pvName, newBytes, signal);
    current = (await claimsApi().getIfExists(name, { namespace: ns, signal })) ?? current;
    if (nodeExpansion) {
      await patchClaimStatus(
        current,
        {
          allocatedResourceStatuses: { storage: 'NodeResizePending' },
          conditions: withConditions(current.status?.conditions, RESIZE_CONDITIONS, {
            type: CONDITION_FS_RESIZE_PENDING,
            message: FS_RESIZE_PENDING_MESSAGE,
            nowIso: nowIso(),
          }),
        },
        signal,
      );
      rec.event(claim, 'Normal', REASONS.FileSystemResizeRequired, 'Require file system resize of volume on node');
    } else {
      await patchClaimStatus(
        current,
        {
          capacity: { ...current.status?.capacity, storage: bytesQuantity(newBytes) },
          allocatedResourceStatuses: { storage: null },
          conditions: withConditions(current.status?.conditions, RESIZE_CONDITIONS),
        },
        signal,
      );
      rec.event(claim, 'Normal', REASONS.VolumeResizeSuccessful, 'Resize volume succeeded');
    }
    log.info('expanded', { claim: key, pv: pvName, bytes: newBytes.toString(), nodeExpansion });
  };

  return { reconcile };
}
