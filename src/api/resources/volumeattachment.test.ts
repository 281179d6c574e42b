import { describe, expect, it } from 'vitest';
import { volumeAttachmentResource as def } from './volumeattachment.js';
import type { KubeObject } from './types.js';
import { admission, clone, texts } from './storage.test-kit.js';

function va(spec: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'VolumeAttachment',
    metadata: { name: 'csi-123' },
    spec: { attacher: 'hostpath.csi.k8s.io', nodeName: 'node1', source: { persistentVolumeName: 'pv1' }, ...spec },
  };
}

function created(o: KubeObject): KubeObject {
  const c = clone(o);
  def.prepareForCreate(c, admission());
  return c;
}

describe('VolumeAttachment create', () => {
  it('starts unattached, whatever the client sent', () => {
    const c = created({ ...va(), status: { attached: true } });
    expect(c.status).toEqual({ attached: false });
    expect(def.validateCreate(c, admission())).toEqual([]);
  });
  it.each([
    {
      name: 'attacher required (twice, as kube)',
      spec: { attacher: '' },
      want: [
        'spec.attacher: Required value',
        'spec.attacher: Required value',
        expect.stringContaining('spec.attacher: Invalid value: ""'),
      ],
    },
    {
      name: 'no source',
      spec: { source: {} },
      want: ['spec.source: Required value: must specify exactly one of inlineVolumeSpec and persistentVolumeName'],
    },
    {
      name: 'both sources',
      spec: {
        source: {
          persistentVolumeName: 'pv1',
          inlineVolumeSpec: { csi: { driver: 'd', volumeHandle: 'h' }, accessModes: ['ReadWriteOnce'] },
        },
      },
      want: ['spec.source: Forbidden: must specify exactly one of inlineVolumeSpec and persistentVolumeName'],
    },
    {
      name: 'empty pv name',
      spec: { source: { persistentVolumeName: '' } },
      want: [
        'spec.source.persistentVolumeName: Required value: must specify non empty persistentVolumeName',
        expect.stringContaining('spec.source.persistentVolumeName: Invalid value: ""'),
      ],
    },
    {
      name: 'node name',
      spec: { nodeName: 'Node_1' },
      want: [expect.stringContaining('spec.nodeName: Invalid value: "Node_1"')],
    },
    {
      name: 'inline spec rules',
      spec: {
        source: {
          inlineVolumeSpec: { accessModes: ['ReadWriteOnce'], capacity: { storage: '1Gi' }, hostPath: { path: '/x' } },
        },
      },
      want: [
        'spec.source.inlineVolumeSpec.capacity: Forbidden: may not be specified in the context of inline volumes',
        'spec.source.inlineVolumeSpec.csi: Required value: has to be specified in the context of inline volumes',
      ],
    },
    {
      name: 'valid inline CSI spec',
      spec: {
        source: {
          inlineVolumeSpec: { accessModes: ['ReadWriteOnce'], csi: { driver: 'd.example', volumeHandle: 'h' } },
        },
      },
      want: [],
    },
  ])('$name', ({ spec, want }) => expect(texts(def.validateCreate(created(va(spec)), admission()))).toEqual(want));
});

describe('VolumeAttachment update', () => {
  const stored = created(va());
  it('spec is immutable', () => {
    const o = clone(stored);
    (o.spec as Record<string, unknown>).nodeName = 'node2';
    def.prepareForUpdate(o, stored, admission());
    expect(texts(def.validateUpdate(o, stored, admission()))).toEqual([
      expect.stringMatching(/^spec: Invalid value: .*: field is immutable$/),
    ]);
  });
  it('the main resource keeps the stored status', () => {
    const o = clone(stored);
    o.status = { attached: true };
    def.prepareForUpdate(o, stored, admission());
    expect(o.status).toEqual({ attached: false });
  });
  it('/status keeps spec and metadata, validates error sizes', () => {
    const o = clone(stored);
    o.status = { attached: false, attachError: { time: '2026-01-01T00:00:00Z', message: 'x'.repeat(1025) } };
    (o.spec as Record<string, unknown>).nodeName = 'node2';
    o.metadata.labels = { a: 'b' };
    def.prepareForStatusUpdate(o, stored, admission());
    expect(o.spec).toEqual(stored.spec);
    expect(o.metadata.labels).toBeUndefined();
    expect(texts(def.validateStatusUpdate(o, stored, admission()))).toEqual([
      'status.attachError.message: Too long: must have at most 262144 bytes',
    ]);
  });
});

describe('VolumeAttachment table', () => {
  it('columns and row', () => {
    expect(def.columns.map((c) => c.name)).toEqual(['Name', 'Attacher', 'PV', 'Node', 'Attached', 'Age']);
    const o = { ...created(va()), status: { attached: true } };
    o.metadata.creationTimestamp = '2026-01-01T00:00:00Z';
    expect(def.row(o, Date.parse('2026-01-01T00:00:05Z'))).toEqual([
      'csi-123',
      'hostpath.csi.k8s.io',
      'pv1',
      'node1',
      true,
      '5s',
    ]);
  });
});
