import { describe, expect, it } from 'vitest';
import { ALL_RESOURCES } from './index.js';

describe('ALL_RESOURCES', () => {
  it('serves each kind once per version, under a unique group/version/plural', () => {
    const kinds = ALL_RESOURCES.map((d) => `${d.group}/${d.version}/${d.kind}`);
    expect(new Set(kinds).size).toBe(kinds.length);
    const paths = ALL_RESOURCES.map((d) => `${d.group}/${d.version}/${d.plural}`);
    expect(new Set(paths).size).toBe(paths.length);
    // A kind served at several versions (SelfSubjectReview v1 and v1beta1) keeps its group and plural.
    const home = new Map<string, string>();
    for (const d of ALL_RESOURCES)
      expect(home.get(d.kind) ?? home.set(d.kind, `${d.group}/${d.plural}`).get(d.kind)).toBe(`${d.group}/${d.plural}`);
    expect(ALL_RESOURCES.map((d) => d.kind)).toEqual(
      expect.arrayContaining([
        'PersistentVolume',
        'PersistentVolumeClaim',
        'StorageClass',
        'CSIDriver',
        'CSINode',
        'VolumeAttachment',
        'CSIStorageCapacity',
      ]),
    );
  });

  it('every storage kind has a schema from the generated definitions', () => {
    for (const d of ALL_RESOURCES.filter(
      (r) => r.group === 'storage.k8s.io' || r.kind.startsWith('PersistentVolume'),
    )) {
      expect(d.schema['x-kubernetes-group-version-kind']?.[0]).toMatchObject({
        group: d.group,
        version: d.version,
        kind: d.kind,
      });
    }
  });

  it('every row has one cell per column', () => {
    for (const d of ALL_RESOURCES) {
      const row = d.row(
        {
          apiVersion: 'v1',
          kind: d.kind,
          metadata: { name: 'x', namespace: 'ns', creationTimestamp: '2026-01-01T00:00:00Z' },
        },
        Date.parse('2026-01-01T00:00:00Z'),
      );
      expect(row, d.kind).toHaveLength(d.columns.length);
    }
  });
});
