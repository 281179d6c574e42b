/**
 * The garbage-collection finalizers a DELETE puts on an object (kube-apiserver's
 * deletionFinalizersForGarbageCollection): `orphan` for propagationPolicy Orphan (or the deprecated
 * orphanDependents: true), `foregroundDeletion` for Foreground; Background sets neither. Without
 * an explicit choice the object keeps the finalizer it already has (a second delete does not
 * change an earlier decision); every kind served here defaults to Background.
 */
import { FOREGROUND_FINALIZER, ORPHAN_FINALIZER, type PropagationPolicy } from '../kube/names.js';

export { PROPAGATION_POLICIES, type PropagationPolicy } from '../kube/names.js';

export interface PropagationOptions {
  readonly propagationPolicy?: PropagationPolicy;
  /** Deprecated DeleteOptions.orphanDependents; may not be combined with propagationPolicy. */
  readonly orphanDependents?: boolean;
}

/** The object's finalizers after a delete with `o`, GC finalizers last (as upstream appends them). */
export function finalizersOnDelete(current: readonly string[], o: PropagationOptions): string[] {
  const has = (f: string): boolean => current.includes(f);
  const orphan = o.orphanDependents ?? (o.propagationPolicy ? o.propagationPolicy === 'Orphan' : has(ORPHAN_FINALIZER));
  const foreground =
    o.orphanDependents !== undefined
      ? false
      : o.propagationPolicy
        ? o.propagationPolicy === 'Foreground'
        : has(FOREGROUND_FINALIZER);
  const out = current.filter((f) => f !== ORPHAN_FINALIZER && f !== FOREGROUND_FINALIZER);
  if (orphan) out.push(ORPHAN_FINALIZER);
  if (foreground) out.push(FOREGROUND_FINALIZER);
  return out;
}

export function sameFinalizerSet(a: readonly string[], b: readonly string[]): boolean {
  const sa = new Set(a);
  const sb = new Set(b);
  return sa.size === sb.size && [...sa].every((f) => sb.has(f));
}
