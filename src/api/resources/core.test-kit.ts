import type { AdmissionContext, KubeObject } from './types.js';

/** Test helpers for the core kinds' tests. */
export const NOW_ISO = '2024-05-01T12:00:00Z';
export const NOW = Date.parse(NOW_ISO);

export function ctx(objects: KubeObject[] = []): AdmissionContext {
  return {
    now: NOW_ISO,
    list: (kind) => objects.filter((o) => o.kind === kind),
    get: (kind, name, namespace) =>
      objects.find((o) => o.kind === kind && o.metadata.name === name && o.metadata.namespace === namespace),
  };
}

/** An object with metadata filled as the registry would have it on create. */
export function obj(kind: string, name: string, rest: Record<string, unknown> = {}, namespace?: string): KubeObject {
  return {
    kind,
    apiVersion: kind === 'Lease' ? 'coordination.k8s.io/v1' : 'v1',
    metadata: { name, ...(namespace ? { namespace } : {}), uid: 'u-1', creationTimestamp: '2024-05-01T11:55:00Z' },
    ...structuredClone(rest),
  };
}

/** `field: message` of each cause, for compact assertions. */
export function texts(causes: ReadonlyArray<{ field: string; message: string }>): string[] {
  return causes.map((c) => `${c.field}: ${c.message}`);
}
