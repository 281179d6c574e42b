import { describe, expect, it } from 'vitest';
import { namespaceResource } from '../resources/namespace.js';
import {
  buildOpenApiV3,
  groupVersionPath,
  openApiV3Document,
  openApiV3Index,
  type OpenApiResource,
} from './documents.js';

const R = (group: string, kind: string, plural: string, namespaced: boolean, hasStatus: boolean): OpenApiResource => ({
  group,
  version: 'v1',
  kind,
  plural,
  namespaced,
  hasStatus,
});
const RESOURCES: readonly OpenApiResource[] = [
  { ...R('', 'Namespace', 'namespaces', false, true), subresources: namespaceResource.subresources },
  R('', 'Node', 'nodes', false, true),
  R('', 'Pod', 'pods', true, true),
  R('', 'PersistentVolume', 'persistentvolumes', false, true),
  R('', 'PersistentVolumeClaim', 'persistentvolumeclaims', true, true),
  R('', 'Event', 'events', true, false),
  R('', 'Secret', 'secrets', true, false),
  R('', 'ConfigMap', 'configmaps', true, false),
  R('storage.k8s.io', 'StorageClass', 'storageclasses', false, false),
  R('storage.k8s.io', 'CSIDriver', 'csidrivers', false, false),
  R('storage.k8s.io', 'CSINode', 'csinodes', false, false),
  R('storage.k8s.io', 'VolumeAttachment', 'volumeattachments', false, true),
  R('storage.k8s.io', 'CSIStorageCapacity', 'csistoragecapacities', true, false),
  R('coordination.k8s.io', 'Lease', 'leases', true, false),
];

interface Op {
  parameters?: Array<{ name: string; in: string }>;
  'x-kubernetes-action'?: string;
  'x-kubernetes-group-version-kind'?: { group: string; version: string; kind: string };
}
type PathItem = Partial<Record<'get' | 'put' | 'post' | 'patch' | 'delete', Op>>;
interface Doc {
  openapi: string;
  paths: Record<string, PathItem>;
  components: { schemas: Record<string, unknown> };
}

/** What kubectl's queryParamVerifierV3 does: the first PATCH op with the GVK decides. */
function kubectlSupportsFieldValidation(doc: Doc, gvk: { group: string; version: string; kind: string }): boolean {
  for (const item of Object.values(doc.paths)) {
    const op = item.patch;
    if (!op) continue;
    const g = op['x-kubernetes-group-version-kind'];
    if (!g || g.group !== gvk.group || g.version !== gvk.version || g.kind !== gvk.kind) continue;
    return (op.parameters ?? []).some((p) => p.name === 'fieldValidation');
  }
  return false;
}

describe('/openapi/v3 index', () => {
  it('lists each served group-version with a hashed URL', () => {
    const idx = openApiV3Index(RESOURCES) as { paths: Record<string, { serverRelativeURL: string }> };
    expect(Object.keys(idx.paths)).toEqual(['api/v1', 'apis/coordination.k8s.io/v1', 'apis/storage.k8s.io/v1']);
    for (const [p, v] of Object.entries(idx.paths))
      expect(v.serverRelativeURL).toMatch(new RegExp(`^/openapi/v3/${p}\\?hash=[0-9A-F]{128}$`));
  });

  it('is stable for the same content and changes with it', () => {
    const a = buildOpenApiV3(RESOURCES).index();
    const b = buildOpenApiV3([...RESOURCES]).index();
    expect(a).toEqual(b);
    const c = buildOpenApiV3(RESOURCES.filter((r) => r.kind !== 'Secret')).index() as typeof a & {
      paths: Record<string, unknown>;
    };
    const aa = a as { paths: Record<string, unknown> };
    expect(c.paths['api/v1']).not.toEqual(aa.paths['api/v1']);
    expect(c.paths['apis/storage.k8s.io/v1']).toEqual(aa.paths['apis/storage.k8s.io/v1']);
  });

  it('gives group-version paths', () => {
    expect(groupVersionPath('', 'v1')).toBe('api/v1');
    expect(groupVersionPath('storage.k8s.io', 'v1')).toBe('apis/storage.k8s.io/v1');
  });
});

describe('group-version documents', () => {
  it('answers undefined for an unserved group-version', () => {
    expect(openApiV3Document(RESOURCES, 'apis/apps/v1')).toBeUndefined();
  });

  it.each(RESOURCES.map((r) => [r.kind, r] as const))('%s: kubectl sees fieldValidation on PATCH', (_k, r) => {
    const doc = openApiV3Document(RESOURCES, groupVersionPath(r.group, r.version)) as Doc;
    expect(doc.openapi).toBe('3.0.0');
    expect(kubectlSupportsFieldValidation(doc, { group: r.group, version: r.version, kind: r.kind })).toBe(true);
  });

  it('every operation carries action and GVK; every PATCH declares fieldValidation', () => {
    for (const path of ['api/v1', 'apis/storage.k8s.io/v1', 'apis/coordination.k8s.io/v1']) {
      const doc = openApiV3Document(RESOURCES, path) as Doc;
      for (const [p, item] of Object.entries(doc.paths)) {
        for (const m of ['get', 'put', 'post', 'patch', 'delete'] as const) {
          const op = item[m];
          if (!op) continue;
          expect(op['x-kubernetes-action'], `${m} ${p}`).toBeTruthy();
          expect(op['x-kubernetes-group-version-kind'], `${m} ${p}`).toBeTruthy();
          if (m === 'patch') expect(op.parameters?.map((x) => x.name)).toContain('fieldValidation');
        }
      }
    }
  });

  it('has kube-shaped paths for namespaced and cluster kinds', () => {
    const doc = openApiV3Document(RESOURCES, 'api/v1') as Doc;
    expect(doc.paths['/api/v1/namespaces/{namespace}/pods/{name}']?.patch?.['x-kubernetes-action']).toBe('patch');
    expect(doc.paths['/api/v1/namespaces/{namespace}/pods/{name}/status']?.put).toBeDefined();
    expect(doc.paths['/api/v1/pods']?.get?.['x-kubernetes-action']).toBe('list');
    expect(doc.paths['/api/v1/nodes/{name}']).toBeDefined();
    expect(doc.paths['/api/v1/namespaces/{name}/finalize']?.put?.['x-kubernetes-action']).toBe('put');
    expect(doc.paths['/api/v1/namespaces/{namespace}/secrets/{name}/status']).toBeUndefined();
    expect(doc.paths['/api/v1/namespaces/{namespace}/pods']?.post?.parameters?.map((p) => p.name)).toContain(
      'fieldValidation',
    );
  });

  it('carries the schemas of its kinds and what they reference, not other groups', () => {
    const core = openApiV3Document(RESOURCES, 'api/v1') as Doc;
    const schemas = Object.keys(core.components.schemas);
    expect(schemas).toEqual(
      expect.arrayContaining([
        'io.k8s.api.core.v1.Pod',
        'io.k8s.api.core.v1.PodList',
        'io.k8s.api.core.v1.Container',
        'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta',
        'io.k8s.apimachinery.pkg.apis.meta.v1.Status',
        'io.k8s.apimachinery.pkg.apis.meta.v1.Patch',
        'io.k8s.apimachinery.pkg.api.resource.Quantity',
      ]),
    );
    expect(schemas.some((s) => s.startsWith('io.k8s.api.storage.'))).toBe(false);
    const storage = openApiV3Document(RESOURCES, 'apis/storage.k8s.io/v1') as Doc;
    // VolumeAttachment's inline PV spec pulls in core types.
    expect(Object.keys(storage.components.schemas)).toContain('io.k8s.api.core.v1.PersistentVolumeSpec');
  });
});
