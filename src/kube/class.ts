/**
 * The StorageClass of a claim or volume, as Kubernetes' storage helpers read it
 * (GetPersistentVolumeClaimClass, PersistentVolumeClaimHasClass, GetPersistentVolumeClass): the
 * deprecated beta annotation still wins over spec.storageClassName, so that objects written before
 * the field existed keep their class. Every component must read the class this way, or the
 * provisioner, binder and scheduler disagree about one claim.
 */
import { ANN_BETA_DEFAULT_CLASS, ANN_BETA_STORAGE_CLASS, ANN_DEFAULT_CLASS } from './names.js';

/** Any object with metadata and a spec; the spec is read defensively (API code sees untyped JSON). */
export interface WithClass {
  readonly metadata?: { readonly annotations?: Readonly<Record<string, string>> | undefined } | undefined;
  readonly spec?: unknown;
}

function specClass(o: WithClass): string | null | undefined {
  const spec = o.spec;
  if (typeof spec !== 'object' || spec === null || !('storageClassName' in spec)) return undefined;
  const sc = spec.storageClassName;
  return typeof sc === 'string' ? sc : sc === null ? null : undefined;
}

/** The claim's class: the beta annotation, else spec.storageClassName, else "". */
export function claimClass(claim: WithClass): string {
  return claim.metadata?.annotations?.[ANN_BETA_STORAGE_CLASS] ?? specClass(claim) ?? '';
}

/** Whether a claim asked for a class at all ("" counts: it means "no class"). */
export function claimHasClass(claim: WithClass): boolean {
  return claim.metadata?.annotations?.[ANN_BETA_STORAGE_CLASS] !== undefined || specClass(claim) != null;
}

/** The volume's class: the beta annotation, else spec.storageClassName, else "". */
export function volumeClass(volume: WithClass): string {
  return claimClass(volume);
}

/** `storageutil.IsDefaultAnnotation`: a StorageClass marked default (the GA annotation, or the beta one) with exactly "true". */
export function isDefaultStorageClass(cls: WithClass): boolean {
  const a = cls.metadata?.annotations;
  return a?.[ANN_DEFAULT_CLASS] === 'true' || a?.[ANN_BETA_DEFAULT_CLASS] === 'true';
}
