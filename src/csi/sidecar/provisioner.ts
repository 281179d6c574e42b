/**
 * The provisioner (external-provisioner + sig-storage-lib-external-provisioner semantics): claims
 * the PV controller handed to this driver get a CSI volume named `pvc-<uid>` and a pre-bound PV.
 * Crash safety comes from the deterministic name: CreateVolume is idempotent by name, and a saved
 * PV is the "done" marker, so a restart at any point converges to exactly one volume.
 */
import type { PersistentVolumeClaim, PersistentVolume } from 'kubernetes-types/core/v1.js';
import type { StorageClass } from 'kubernetes-types/storage/v1.js';
import type { EventRecorder } from '../../client/index.js';
import { realClock, type Clock } from '../../util/backoff.js';
import { AlreadyExistsError, InvalidError, NotFoundError, StowageError, UnavailableError } from '../../util/errors.js';
import { CsiError } from '../client.js';
import type { TopologyRequirement } from '../proto/types.js';
import { errorMessage, fetchSecrets, type SidecarContext } from './context.js';
import { ANN_SELECTED_NODE, CLONE_FINALIZER, REASONS, provisionerIdentity } from './names.js';
import {
  buildPv,
  cloneSource,
  cloneSourceInUse,
  cloneSourceName,
  decideClaim,
  planProvision,
  type ProvisionPlan,
} from './provision-decide.js';
import {
  accessibilityRequirements,
  allowedTopologySegments,
  driverTopologyKeys,
  nodeSegments,
  type Segments,
} from './topology.js';
import { claimClass } from '../../kube/class.js';
import { splitNamespacedKey } from '../../kube/keys.js';

export interface ProvisionerOptions {
  readonly recorder: EventRecorder;
  /** Attempts to save the PV before the volume is deleted again (the library's default is 5). */
  readonly saveAttempts?: number;
  /** Delay between save attempts (the library waits 10 s; we default lower). */
  readonly saveRetryDelayMs?: number;
  readonly clock?: Clock;
  /** Add the claim's and PV's names to CreateVolume parameters (external-provisioner --extra-create-metadata). */
  readonly extraCreateMetadata?: boolean;
}

export interface Provisioner {
  /** Reconciles one claim by `namespace/name`. */
  reconcile(key: string, signal: AbortSignal): Promise<void>;
}

export function newProvisioner(ctx: SidecarContext, o: ProvisionerOptions): Provisioner {
  const { informers, driver, log } = ctx;
  const clock = o.clock ?? realClock;
  const saveAttempts = o.saveAttempts ?? 5;
  const saveDelay = o.saveRetryDelayMs ?? 1_000;
  const rec = o.recorder;
  const identity = provisionerIdentity(driver, Date.now(), Math.floor(Math.random() * 10_000));

  const topologyFor = (
    claim: PersistentVolumeClaim,
    cls: StorageClass,
    selectedNode: string | undefined,
  ): TopologyRequirement | undefined => {
    if (!ctx.topologyAware) return undefined;
    const cluster: Segments[] = [];
    for (const cn of informers.csiNodes.lister.list()) {
      const keys = driverTopologyKeys(cn, driver);
      const node = informers.nodes.lister.get(cn.metadata?.name ?? '');
      if (!keys || keys.length === 0 || !node) continue;
      try {
        cluster.push(nodeSegments(node, keys));
      } catch {
        continue; // a node without its labels yet (registration in progress) offers no topology
      }
    }
    let selected: Segments | undefined;
    if (selectedNode) {
      // The node may be registering right now (Node, CSINode and its labels arrive separately):
      // these are retried with backoff, not reported as the user's mistake.
      const node = informers.nodes.lister.get(selectedNode);
      if (!node) throw new UnavailableError(`failed to get target node: node "${selectedNode}" not found`);
      const keys = driverTopologyKeys(informers.csiNodes.lister.get(selectedNode), driver);
      if (keys === undefined)
        throw new UnavailableError(
          `driver ${driver} is not registered on the selected node "${selectedNode}" (no CSINode entry)`,
        );
      try {
        selected = nodeSegments(node, keys);
      } catch (e) {
        throw new UnavailableError(errorMessage(e), { cause: e });
      }
    }
    return accessibilityRequirements({
      allowed: allowedTopologySegments(cls.allowedTopologies),
      cluster,
      ...(selected ? { selected, selectedNode } : {}),
      claimName: claim.metadata?.name ?? '',
    });
  };

  /** WaitForFirstConsumer: the chosen node cannot take the volume; let the scheduler choose again. */
  const reschedule = async (claim: PersistentVolumeClaim, signal: AbortSignal): Promise<void> => {
    const ns = claim.metadata?.namespace ?? '';
    await ctx.client
      .resource('PersistentVolumeClaim')
      .patch(
        claim.metadata?.name ?? '',
        'merge',
        { metadata: { annotations: { [ANN_SELECTED_NODE]: null } } },
        { namespace: ns, signal },
      )
      .catch((e: unknown) =>
        log.warn('could not clear the selected node', {
          claim: `${ns}/${claim.metadata?.name ?? ''}`,
          error: errorMessage(e),
        }),
      );
  };

  /** Saves the PV, retrying; true when it (or our earlier copy of it) is stored. */
  const savePv = async (
    pv: PersistentVolume,
    claimUid: string,
    signal: AbortSignal,
  ): Promise<{ ok: true } | { ok: false; error: unknown }> => {
    let last: unknown;
    for (let attempt = 1; attempt <= saveAttempts; attempt++) {
      if (signal.aborted) throw signal.reason;
      try {
        await ctx.client.resource('PersistentVolume').create(pv, { signal });
        return { ok: true };
      } catch (e) {
        if (e instanceof AlreadyExistsError) {
          const existing = await ctx.client.resource('PersistentVolume').get(pv.metadata?.name ?? '', { signal });
          if (existing.spec?.claimRef?.uid === claimUid) return { ok: true };
          return { ok: false, error: e };
        }
        last = e;
        if (e instanceof StowageError && !e.retryable) break;
        if (signal.aborted) throw signal.reason;
        log.warn('saving the provisioned PV failed; retrying', {
          pv: pv.metadata?.name,
          attempt,
          error: errorMessage(e),
        });
        if (attempt < saveAttempts) await clock.sleep(saveDelay, signal);
      }
    }
    return { ok: false, error: last };
  };

  /** Adds or removes the cloning-protection finalizer on a claim (fresh read, resourceVersion-checked write). */
  const setCloneFinalizer = async (ns: string, name: string, want: boolean, signal: AbortSignal): Promise<void> => {
    const api = ctx.client.resource('PersistentVolumeClaim');
    const c = await api.getIfExists(name, { namespace: ns, signal });
    if (!c) return;
    const fins = c.metadata?.finalizers ?? [];
    if (fins.includes(CLONE_FINALIZER) === want) return;
    c.metadata = {
      ...c.metadata,
      finalizers: want ? [...fins, CLONE_FINALIZER] : fins.filter((f) => f !== CLONE_FINALIZER),
    };
    await api.update(c, { signal });
  };

  const reconcile = async (key: string, signal: AbortSignal): Promise<void> => {
    const [ns, name] = splitNamespacedKey(key);
    const claim = informers.claims.lister.get(ns, name);
    if (!claim) return;
    // A clone source is protected only while a clone of it still waits for its volume.
    if (
      (claim.metadata?.finalizers ?? []).includes(CLONE_FINALIZER) &&
      !cloneSourceInUse(claim, informers.claims.lister.list(ns), driver)
    ) {
      await setCloneFinalizer(ns, name, false, signal);
    }
    const className = claimClass(claim);
    const pvExists = (n: string): boolean => informers.volumes.lister.get(n) !== undefined;
    let d = decideClaim(claim, driver, informers.classes.lister.get(className), pvExists);
    // A class created a moment before the claim may not be in our cache yet: ask before complaining
    // (only for a claim handed to this driver: the others are skipped whatever their class).
    if (d.kind === 'waitForClass' && className) {
      const cls = await ctx.client
        .resource('StorageClass')
        .get(className, { signal })
        .catch((e: unknown) => {
          if (e instanceof NotFoundError) return undefined;
          throw e;
        });
      d = decideClaim(claim, driver, cls, pvExists);
    }
    if (d.kind === 'skip') return;
    if (d.kind === 'waitForClass') {
      rec.event(claim, 'Warning', REASONS.ProvisioningFailed, `storageclass.storage.k8s.io "${d.className}" not found`);
      throw new NotFoundError(`class ${d.className} of claim ${key} not found`); // not retried: a class add re-enqueues
    }
    // The informer may lag behind our own write of a moment ago: ask the server before creating.
    const existing = await ctx.client
      .resource('PersistentVolume')
      .get(d.pvName, { signal })
      .catch((e: unknown) => {
        if (e instanceof NotFoundError) return undefined;
        throw e;
      });
    if (existing) return;

    rec.event(claim, 'Normal', REASONS.Provisioning, `External provisioner is provisioning volume for claim "${key}"`);
    const failed = (e: unknown): void =>
      rec.event(
        claim,
        'Warning',
        REASONS.ProvisioningFailed,
        `failed to provision volume with StorageClass "${d.cls.metadata?.name ?? ''}": ${errorMessage(e)}`,
      );

    let plan: ProvisionPlan;
    let secrets: Record<string, string>;
    try {
      if (!ctx.controllerCaps.has('CREATE_DELETE_VOLUME'))
        throw new InvalidError(`driver ${driver} does not support CREATE_DELETE_VOLUME`);
      const contentSource = cloneSource(
        claim,
        (n, c) => informers.claims.lister.get(n, c),
        (n) => informers.volumes.lister.get(n),
        driver,
      );
      if (contentSource && !ctx.controllerCaps.has('CLONE_VOLUME'))
        throw new InvalidError(`driver ${driver} does not support cloning (CLONE_VOLUME)`);
      const topology = topologyFor(claim, d.cls, d.selectedNode);
      plan = planProvision({
        claim,
        cls: d.cls,
        pvName: d.pvName,
        singleNodeMultiWriter: ctx.controllerCaps.has('SINGLE_NODE_MULTI_WRITER'),
        extraCreateMetadata: o.extraCreateMetadata ?? false,
        ...(contentSource ? { contentSource } : {}),
        ...(topology ? { topology } : {}),
      });
      secrets = await fetchSecrets(ctx, plan.provisionerSecret, signal);
      const source = contentSource ? cloneSourceName(claim) : undefined;
      if (source) await setCloneFinalizer(ns, source, true, signal);
    } catch (e) {
      failed(e); // an InvalidError (only the user can fix it) is not retried until the claim or class changes
      throw e;
    }

    let volume;
    try {
      const r = await ctx.csi.createVolume(
        { ...plan.request, secrets },
        {
          signal,
          timeoutMs: ctx.csiTimeoutMs,
          for: { kind: 'PersistentVolumeClaim', namespace: ns, name: claim.metadata?.name ?? '' },
        },
      );
      if (!r.volume) throw new InvalidError('CreateVolume returned no volume');
      volume = r.volume;
    } catch (e) {
      if (signal.aborted) throw e;
      failed(e);
      if (d.selectedNode && e instanceof CsiError && e.grpcCodeName === 'RESOURCE_EXHAUSTED')
        await reschedule(claim, signal);
      throw e;
    }
    // Stopped between CreateVolume and the PV write: the restarted sidecar repeats CreateVolume
    // under the same name, gets the same volume back and saves the PV then.
    if (signal.aborted) throw signal.reason;

    let pv: PersistentVolume;
    try {
      pv = buildPv({ claim, cls: d.cls, driver, plan, pvName: d.pvName, volume, identity });
    } catch (e) {
      failed(e);
      await deleteCreated(volume.volumeId, secrets, claim, signal);
      throw e;
    }
    const saved = await savePv(pv, claim.metadata?.uid ?? '', signal);
    if (!saved.ok) {
      // external-provisioner (CreateProvisionedPVLimiter) never deletes a volume it could not record:
      // the PV may have been stored after all (a reply lost to an API server crash), and deleting
      // the volume would leave that PV without one. The retry repeats CreateVolume (idempotent by
      // name, the same volume back) and saves the PV again, for as long as it takes.
      rec.event(
        claim,
        'Warning',
        REASONS.ProvisioningFailed,
        `Error creating provisioned PV object for claim ${key}: ${errorMessage(saved.error)}. Will retry.`,
      );
      const cause = saved.error instanceof Error ? saved.error : new Error(errorMessage(saved.error));
      throw cause instanceof StowageError && cause.retryable
        ? cause
        : new UnavailableError(`saving PV ${d.pvName}: ${errorMessage(cause)}`, { cause });
    }
    log.info('provisioned', { claim: key, pv: d.pvName, volumeId: volume.volumeId });
    rec.event(claim, 'Normal', REASONS.ProvisioningSucceeded, `Successfully provisioned volume ${d.pvName}`);
  };

  const deleteCreated = async (
    volumeId: string,
    secrets: Record<string, string>,
    claim: PersistentVolumeClaim,
    signal: AbortSignal,
  ): Promise<void> => {
    try {
      await ctx.csi.deleteVolume({ volumeId, secrets }, { signal, timeoutMs: ctx.csiTimeoutMs });
    } catch (e) {
      rec.event(
        claim,
        'Warning',
        REASONS.ProvisioningCleanupFailed,
        `Error cleaning provisioned volume for claim: ${errorMessage(e)}. Please delete manually.`,
      );
    }
  };

  return { reconcile };
}
