import type { FieldCause } from '../../util/errors.js';
import type { AdmissionContext, KubeObject } from './types.js';

/** Test helpers for the storage kinds: an admission context over a fixed set of objects. */

export const NOW = '2026-01-02T03:04:05Z';

export function admission(objects: readonly KubeObject[] = [], now = NOW): AdmissionContext {
  return {
    now,
    list: (kind, namespace) =>
      objects.filter((o) => o.kind === kind && (namespace === undefined || o.metadata.namespace === namespace)),
    get: (kind, name, namespace) =>
      objects.find(
        (o) =>
          o.kind === kind &&
          o.metadata.name === name &&
          (namespace === undefined || o.metadata.namespace === namespace),
      ),
  };
}

/** `field: message` of each cause, as they appear in the Invalid message. */
export function texts(causes: readonly FieldCause[]): string[] {
  return causes.map((c) => `${c.field}: ${c.message}`);
}

export function clone<T>(v: T): T {
  return structuredClone(v);
}
