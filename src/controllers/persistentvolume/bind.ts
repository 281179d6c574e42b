/**
 * The write primitives of the PV controller, each idempotent (no write when already satisfied) and
 * each storing its result in the controller cache. `bind` chains them in Kubernetes' order:
 *   1. PV spec.claimRef (+ bound-by-controller)   2. PV status Bound
 *   3. PVC spec.volumeName + bind-completed (+ bound-by-controller)   4. PVC status Bound
 * A crash or conflict between any two leaves a state from which the next syncClaim/syncVolume
 * resumes: every step re-checks what is already written.
 */
import { referenceTo } from '../../client/events.js';
import type { SyncContext } from './context.js';
import { isVolumeBoundToClaim } from './match.js';
import { quantityNanos } from '../../kube/quantity.js';
import {
  ANN_BIND_COMPLETED,
  ANN_BOUND_BY_CONTROLLER,
  ANN_PRE_RESIZE_CAPACITY,
  type EventReason,
  type EventType,
  type ObjectReference,
  type PersistentVolume,
  type PersistentVolumeClaim,
  type PvcPhase,
  type PvPhase,
} from './types.js';
import { jsonEqual } from '../../util/jsonequal.js';

export class BindError extends Error {}

export function clone<T>(o: T): T {
  return structuredClone(o);
}

/** A copy whose metadata and spec may be edited one level deep (nested values must be replaced, not mutated). */
export function editable<T extends { metadata?: object; spec?: object }>(o: T): T {
  return { ...o, metadata: { ...(o.metadata ?? {}) }, spec: { ...(o.spec ?? {}) } };
}

export function hasAnnotation(o: { metadata?: { annotations?: Record<string, string> } }, key: string): boolean {
  return o.metadata?.annotations?.[key] !== undefined;
}

function setAnnotation(o: { metadata?: { annotations?: Record<string, string> } }, key: string, value: string): void {
  o.metadata = o.metadata ?? {};
  o.metadata.annotations = { ...(o.metadata.annotations ?? {}), [key]: value };
}

export function objectRef(
  o: PersistentVolume | PersistentVolumeClaim,
  kind: 'PersistentVolume' | 'PersistentVolumeClaim',
): ObjectReference {
  const ref: ObjectReference = { kind, name: o.metadata?.name ?? '', apiVersion: 'v1' };
  if (o.metadata?.namespace) ref.namespace = o.metadata.namespace;
  if (o.metadata?.uid) ref.uid = o.metadata.uid;
  if (o.metadata?.resourceVersion) ref.resourceVersion = o.metadata.resourceVersion;
  return ref;
}

export function volumeEvent(
  c: SyncContext,
  v: PersistentVolume,
  type: EventType,
  reason: EventReason,
  message: string,
): void {
  c.fx.event({ object: objectRef(v, 'PersistentVolume'), type, reason, message });
}

export function claimEvent(
  c: SyncContext,
  pvc: PersistentVolumeClaim,
  type: EventType,
  reason: EventReason,
  message: string,
): void {
  c.fx.event({ object: objectRef(pvc, 'PersistentVolumeClaim'), type, reason, message });
}

/** The claimRef Kubernetes writes (reference.GetReference of the claim). */
export function claimReference(claim: PersistentVolumeClaim): ObjectReference {
  return referenceTo(claim, 'PersistentVolumeClaim');
}

/** updateVolumePhase: status write only when the phase differs. */
export async function updateVolumePhase(
  c: SyncContext,
  volume: PersistentVolume,
  phase: PvPhase,
  message: string,
): Promise<PersistentVolume> {
  if (volume.status?.phase === phase) return volume;
  const status = { ...(volume.status ?? {}), phase };
  if (message) status.message = message;
  else delete status.message;
  const v: PersistentVolume = { ...volume, status };
  const stored = await c.fx.updateVolumeStatus(v);
  c.cache.storeVolume(stored);
  if (phase === 'Available' && !stored.spec?.claimRef) {
    // A volume just became takeable: retry a claim that found nothing and could take it.
    const key = c.cache.takeWaitingFor(stored);
    if (key !== undefined) c.fx.enqueueClaim(key, c.options.waitingClaimWakeDelayMs);
  }
  return stored;
}

/** The event is emitted only when the phase actually changes. */
export async function updateVolumePhaseWithEvent(
  c: SyncContext,
  volume: PersistentVolume,
  phase: PvPhase,
  type: EventType,
  reason: EventReason,
  message: string,
): Promise<PersistentVolume> {
  if (volume.status?.phase === phase) return volume;
  const stored = await updateVolumePhase(c, volume, phase, message);
  volumeEvent(c, stored, type, reason, message);
  return stored;
}

/** updateClaimStatus: phase, and access modes + capacity copied from `volume` (or cleared without one). */
export async function updateClaimStatus(
  c: SyncContext,
  claim: PersistentVolumeClaim,
  phase: PvcPhase,
  volume: PersistentVolume | null,
): Promise<PersistentVolumeClaim> {
  let dirty = false;
  // Shallow copies suffice: cached objects are never mutated, and every nested value we change is replaced.
  const status: NonNullable<PersistentVolumeClaim['status']> = { ...(claim.status ?? {}) };
  const next: PersistentVolumeClaim = { ...claim, status };
  if (claim.status?.phase !== phase) {
    status.phase = phase;
    dirty = true;
  }
  if (volume === null) {
    if (claim.status?.accessModes != null) {
      delete status.accessModes;
      dirty = true;
    }
    if (claim.status?.capacity != null) {
      delete status.capacity;
      dirty = true;
    }
  } else {
    if (!jsonEqual(claim.status?.accessModes ?? null, volume.spec?.accessModes ?? null)) {
      if (volume.spec?.accessModes) status.accessModes = [...volume.spec.accessModes];
      else delete status.accessModes;
      dirty = true;
    }
    // Capacity is copied only when the claim is becoming Bound: a later difference can be a
    // deliberate filesystem-vs-device size gap and must not be clobbered.
    if (claim.status?.phase !== phase) {
      const volumeCap = volume.spec?.capacity?.['storage'];
      if (volumeCap === undefined)
        throw new BindError(`PersistentVolume "${volume.metadata?.name ?? ''}" is without a storage capacity`);
      const claimCap = claim.status?.capacity?.['storage'];
      const pre = volume.metadata?.annotations?.[ANN_PRE_RESIZE_CAPACITY];
      if (pre !== undefined) {
        let preQty: string | number = pre;
        try {
          quantityNanos(pre);
        } catch {
          preQty = volumeCap;
        }
        status.capacity = { ...(status.capacity ?? {}), storage: preQty };
        dirty = true;
      } else if (claimCap === undefined || quantityNanos(volumeCap) !== quantityNanos(claimCap)) {
        status.capacity = { ...(volume.spec?.capacity ?? {}) };
        dirty = true;
      }
    }
  }
  if (!dirty) return claim;
  const stored = await c.fx.updateClaimStatus(next);
  c.cache.storeClaim(stored);
  return stored;
}

/** The event is emitted only when the phase actually changes. */
export async function updateClaimStatusWithEvent(
  c: SyncContext,
  claim: PersistentVolumeClaim,
  phase: PvcPhase,
  volume: PersistentVolume | null,
  type: EventType,
  reason: EventReason,
  message: string,
): Promise<PersistentVolumeClaim> {
  if (claim.status?.phase === phase) return claim;
  const stored = await updateClaimStatus(c, claim, phase, volume);
  claimEvent(c, stored, type, reason, message);
  return stored;
}

/** GetBindVolumeToClaim: the PV as it must look bound to `claim`, and whether that differs. */
export function volumeBoundTo(
  volume: PersistentVolume,
  claim: PersistentVolumeClaim,
): { volume: PersistentVolume; dirty: boolean } {
  const setByController = !isVolumeBoundToClaim(volume, claim);
  const v = editable(volume);
  v.spec = v.spec ?? {};
  let dirty = false;
  const ref = volume.spec?.claimRef;
  if (
    !ref ||
    (ref.name ?? '') !== (claim.metadata?.name ?? '') ||
    (ref.namespace ?? '') !== (claim.metadata?.namespace ?? '') ||
    (ref.uid ?? '') !== (claim.metadata?.uid ?? '')
  ) {
    v.spec.claimRef = claimReference(claim);
    dirty = true;
  }
  if (setByController && !hasAnnotation(v, ANN_BOUND_BY_CONTROLLER)) {
    setAnnotation(v, ANN_BOUND_BY_CONTROLLER, 'yes');
    dirty = true;
  }
  return { volume: v, dirty };
}

/** Step 1: write the claimRef on the PV (only if not already there). */
export async function bindVolumeToClaim(
  c: SyncContext,
  volume: PersistentVolume,
  claim: PersistentVolumeClaim,
): Promise<PersistentVolume> {
  const { volume: next, dirty } = volumeBoundTo(volume, claim);
  if (!dirty) return volume;
  const stored = await c.fx.updateVolume(next);
  c.cache.storeVolume(stored);
  return stored;
}

/** Step 3: volumeName + bind-completed (+ bound-by-controller when the controller chose the PV). */
export async function bindClaimToVolume(
  c: SyncContext,
  claim: PersistentVolumeClaim,
  volume: PersistentVolume,
): Promise<PersistentVolumeClaim> {
  let dirty = false;
  const next = editable(claim);
  next.spec = next.spec ?? {};
  const volumeName = volume.metadata?.name ?? '';
  if (volumeName !== (claim.spec?.volumeName ?? '')) {
    dirty = true;
    next.spec.volumeName = volumeName;
    if (!hasAnnotation(next, ANN_BOUND_BY_CONTROLLER)) setAnnotation(next, ANN_BOUND_BY_CONTROLLER, 'yes');
  }
  if (!hasAnnotation(next, ANN_BIND_COMPLETED)) {
    setAnnotation(next, ANN_BIND_COMPLETED, 'yes');
    dirty = true;
  }
  if (!dirty) return claim;
  const stored = await c.fx.updateClaim(next);
  c.cache.storeClaim(stored);
  return stored;
}

/** bind: the four steps in Kubernetes' order; stops at the first failure (the next sync resumes). */
export async function bind(c: SyncContext, volume: PersistentVolume, claim: PersistentVolumeClaim): Promise<void> {
  const v = await bindVolumeSide(c, volume, claim);
  await bindClaimSide(c, claim, v);
}

/** Steps 1 and 2. Until the claim side is written the binding can still be undone (unbindVolume). */
export async function bindVolumeSide(
  c: SyncContext,
  volume: PersistentVolume,
  claim: PersistentVolumeClaim,
): Promise<PersistentVolume> {
  const v = await bindVolumeToClaim(c, volume, claim);
  return updateVolumePhase(c, v, 'Bound', '');
}

/** Steps 3 and 4: the claim names the volume; from here on the binding is final. */
export async function bindClaimSide(
  c: SyncContext,
  claim: PersistentVolumeClaim,
  volume: PersistentVolume,
): Promise<void> {
  const pvc = await bindClaimToVolume(c, claim, volume);
  await updateClaimStatus(c, pvc, 'Bound', volume);
}

/**
 * unbindVolume: undo a binding. A controller-made binding loses claimRef and the annotation; a
 * user's pre-binding keeps its claimRef and loses only the UID. Then phase Available.
 */
export async function unbindVolume(c: SyncContext, volume: PersistentVolume): Promise<PersistentVolume> {
  const v = editable(volume);
  v.spec = v.spec ?? {};
  if (hasAnnotation(volume, ANN_BOUND_BY_CONTROLLER)) {
    delete v.spec.claimRef;
    const anns = { ...(v.metadata?.annotations ?? {}) };
    delete anns[ANN_BOUND_BY_CONTROLLER];
    if (v.metadata) {
      if (Object.keys(anns).length === 0) delete v.metadata.annotations;
      else v.metadata.annotations = anns;
    }
  } else if (v.spec.claimRef) {
    v.spec.claimRef = { ...v.spec.claimRef };
    delete v.spec.claimRef.uid;
  }
  const stored = await c.fx.updateVolume(v);
  c.cache.storeVolume(stored);
  return updateVolumePhase(c, stored, 'Available', '');
}
