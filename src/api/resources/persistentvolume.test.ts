import { describe, expect, it } from 'vitest';
import { persistentVolumeResource as def, accessModesString } from './persistentvolume.js';
import { formatInvalidMessage } from './common.js';
import type { KubeObject } from './types.js';
import { NOW, admission, clone, texts } from './storage.test-kit.js';

function pv(spec: Record<string, unknown> = {}, meta: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name: 'pv1', ...meta },
    spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/tmp/x' }, ...spec },
  };
}

function created(o: KubeObject): KubeObject {
  const c = clone(o);
  const ctx = admission();
  def.prepareForCreate(c, ctx);
  def.mutatingAdmission?.(c, undefined, ctx);
  return c;
}

function createErrors(o: KubeObject): string[] {
  return texts(def.validateCreate(created(o), admission()));
}

describe('PersistentVolume create', () => {
  it('defaults reclaim policy, volume mode, hostPath type; Pending with a transition time; pv-protection', () => {
    const c = created(pv());
    expect(c.spec).toMatchObject({
      persistentVolumeReclaimPolicy: 'Retain',
      volumeMode: 'Filesystem',
      hostPath: { path: '/tmp/x', type: '' },
    });
    expect(c.status).toEqual({ phase: 'Pending', lastPhaseTransitionTime: NOW });
    expect(c.metadata.finalizers).toEqual(['kubernetes.io/pv-protection']);
    expect(def.validateCreate(c, admission())).toEqual([]);
  });

  it('stores capacity in canonical form', () => {
    expect(created(pv({ capacity: { storage: '1024Mi' } })).spec).toMatchObject({ capacity: { storage: '1Gi' } });
  });

  it('keeps explicit values and does not add the finalizer twice', () => {
    const c = created(
      pv(
        { persistentVolumeReclaimPolicy: 'Delete', volumeMode: 'Block' },
        { finalizers: ['kubernetes.io/pv-protection'] },
      ),
    );
    expect(c.spec).toMatchObject({ persistentVolumeReclaimPolicy: 'Delete', volumeMode: 'Block' });
    expect(c.metadata.finalizers).toEqual(['kubernetes.io/pv-protection']);
  });

  it('resets a client-supplied status and drops volumeAttributesClassName (alpha in 1.30)', () => {
    const c = created({ ...pv({ volumeAttributesClassName: 'gold' }), status: { phase: 'Bound' } });
    expect(c.status).toEqual({ phase: 'Pending', lastPhaseTransitionTime: NOW });
    expect((c.spec as Record<string, unknown>).volumeAttributesClassName).toBeUndefined();
  });

  it.each([
    { name: 'no source', spec: { hostPath: undefined }, want: ['spec: Required value: must specify a volume type'] },
    {
      name: 'two sources',
      spec: { nfs: { server: 's', path: '/e' } },
      want: ['spec.nfs: Forbidden: may not specify more than 1 volume type'],
    },
    {
      name: "cephfs uses kube's error path",
      spec: { cephfs: { monitors: ['m'] } },
      want: ['spec.cephFS: Forbidden: may not specify more than 1 volume type'],
    },
    {
      name: 'no capacity',
      spec: { capacity: undefined },
      want: [
        'spec.capacity: Required value',
        'spec.capacity: Unsupported value: core.ResourceList{}: supported values: "storage"',
      ],
    },
    {
      name: 'extra capacity key',
      spec: { capacity: { storage: '1Gi', cpu: '1' } },
      want: [
        'spec.capacity: Unsupported value: core.ResourceList{"storage":"1Gi", "cpu":"1"}: supported values: "storage"',
      ],
    },
    {
      name: 'zero capacity',
      spec: { capacity: { storage: '0' } },
      want: ['spec.capacity[storage]: Invalid value: "0": must be greater than zero'],
    },
    {
      name: 'negative capacity',
      spec: { capacity: { storage: '-1Gi' } },
      want: [
        'spec.capacity[storage]: Invalid value: -1073741824: must be a valid resource quantity',
        'spec.capacity[storage]: Invalid value: "-1Gi": must be greater than zero',
      ],
    },
    { name: 'no access modes', spec: { accessModes: [] }, want: ['spec.accessModes: Required value'] },
    {
      name: 'bad access mode',
      spec: { accessModes: ['ReadWriteSometimes'] },
      want: [
        'spec.accessModes: Unsupported value: "ReadWriteSometimes": supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"',
      ],
    },
    {
      name: 'RWOP with others',
      spec: { accessModes: ['ReadWriteOncePod', 'ReadOnlyMany'] },
      want: ['spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes'],
    },
    {
      name: 'reclaim policy',
      spec: { persistentVolumeReclaimPolicy: 'Keep' },
      want: [
        'spec.persistentVolumeReclaimPolicy: Unsupported value: "Keep": supported values: "Delete", "Recycle", "Retain"',
      ],
    },
    {
      name: 'recycle of /',
      spec: { persistentVolumeReclaimPolicy: 'Recycle', hostPath: { path: '/' } },
      want: ["spec.persistentVolumeReclaimPolicy: Forbidden: may not be 'recycle' for a hostPath mount of '/'"],
    },
    {
      name: 'volume mode',
      spec: { volumeMode: 'Raw' },
      want: ['spec.volumeMode: Unsupported value: "Raw": supported values: "Block", "Filesystem"'],
    },
    { name: 'hostPath path required', spec: { hostPath: { path: '' } }, want: ['spec.hostPath.path: Required value'] },
    {
      name: 'hostPath backsteps',
      spec: { hostPath: { path: '/a/../b' } },
      want: ['spec.hostPath.path: Invalid value: "/a/../b": must not contain \'..\''],
    },
    {
      name: 'hostPath type',
      spec: { hostPath: { path: '/a', type: 'Dir' } },
      want: [
        'spec.hostPath.type: Unsupported value: "Dir": supported values: "", "BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File", "FileOrCreate", "Socket"',
      ],
    },
    {
      name: 'nfs',
      spec: { hostPath: undefined, nfs: { server: '', path: 'rel' } },
      want: ['spec.nfs.server: Required value', 'spec.nfs.path: Invalid value: "rel": must be an absolute path'],
    },
    {
      name: 'csi driver and handle',
      spec: { hostPath: undefined, csi: { driver: '', volumeHandle: '' } },
      want: [
        'spec.csi.driver: Required value',
        expect.stringContaining('spec.csi.driver: Invalid value: "": a lowercase RFC 1123 subdomain'),
        'spec.csi.volumeHandle: Required value',
      ],
    },
    {
      name: 'csi driver too long',
      spec: { hostPath: undefined, csi: { driver: 'a'.repeat(64), volumeHandle: 'h' } },
      want: ['spec.csi.driver: Too long: must have at most 63 bytes'],
    },
    {
      name: 'csi secret ref',
      spec: {
        hostPath: undefined,
        csi: { driver: 'd.example.com', volumeHandle: 'h', nodePublishSecretRef: { name: 's' } },
      },
      want: ['spec.csi.nodePublishSecretRef.namespace: Required value'],
    },
    {
      name: 'local needs node affinity',
      spec: { hostPath: undefined, local: { path: '/mnt/d' } },
      want: ['spec.nodeAffinity: Required value: Local volume requires node affinity'],
    },
    {
      name: 'node affinity required',
      spec: { nodeAffinity: {} },
      want: ['spec.nodeAffinity.required: Required value: must specify required node constraints'],
    },
    {
      name: 'node affinity terms',
      spec: { nodeAffinity: { required: { nodeSelectorTerms: [] } } },
      want: ['spec.nodeAffinity.required.nodeSelectorTerms: Required value: must have at least one node selector term'],
    },
    {
      name: 'storage class name',
      spec: { storageClassName: 'Fast' },
      want: [expect.stringContaining('spec.storageClassName: Invalid value: "Fast": a lowercase RFC 1123 subdomain')],
    },
  ])('$name', ({ spec, want }) => {
    expect(createErrors(pv(spec))).toEqual(want);
  });

  it('validates the name', () => {
    expect(createErrors(pv({}, { name: 'Bad_Name' }))).toEqual([
      expect.stringContaining('metadata.name: Invalid value: "Bad_Name"'),
    ]);
  });

  it('forbids the mount-options annotation for hostPath and CSI but not NFS', () => {
    const ann = { annotations: { 'volume.beta.kubernetes.io/mount-options': 'ro' } };
    expect(createErrors(pv({}, ann))).toEqual([
      'metadata.annotations.volume.beta.kubernetes.io/mount-options: Forbidden: may not specify mount options for this volume type',
    ]);
    expect(createErrors(pv({ hostPath: undefined, nfs: { server: 's', path: '/e' } }, ann))).toEqual([]);
  });

  it("builds kube's Invalid message", () => {
    const causes = def.validateCreate(created(pv({ capacity: undefined, accessModes: undefined })), admission());
    expect(formatInvalidMessage('PersistentVolume', 'pv1', causes)).toBe(
      'PersistentVolume "pv1" is invalid: [spec.accessModes: Required value, spec.capacity: Required value, spec.capacity: Unsupported value: core.ResourceList{}: supported values: "storage"]',
    );
  });
});

describe('PersistentVolume update', () => {
  const stored = (() => {
    const c = created(pv({ csi: { driver: 'hostpath.csi.k8s.io', volumeHandle: 'v1' }, hostPath: undefined }));
    c.metadata.resourceVersion = '5';
    c.metadata.uid = 'u1';
    c.status = { phase: 'Available', lastPhaseTransitionTime: '2026-01-01T00:00:00Z' };
    return c;
  })();

  function update(mutate: (o: KubeObject & { spec: Record<string, unknown> }) => void): {
    obj: KubeObject;
    errs: string[];
  } {
    const o = clone(stored) as KubeObject & { spec: Record<string, unknown> };
    mutate(o);
    def.prepareForUpdate(o, stored, admission());
    return { obj: o, errs: texts(def.validateUpdate(o, stored, admission())) };
  }

  it('keeps the stored status on the main resource', () => {
    const { obj, errs } = update((o) => {
      o.status = { phase: 'Bound' };
    });
    expect(errs).toEqual([]);
    expect(obj.status).toEqual(stored.status);
  });

  it('allows claimRef, capacity, reclaim policy and class changes', () => {
    const { errs } = update((o) => {
      o.spec.claimRef = { namespace: 'ns', name: 'c' };
      o.spec.capacity = { storage: '2Gi' };
      o.spec.persistentVolumeReclaimPolicy = 'Delete';
      o.spec.storageClassName = 'fast';
    });
    expect(errs).toEqual([]);
  });

  it('volume source is immutable', () => {
    const { errs } = update((o) => {
      o.spec.csi = { driver: 'hostpath.csi.k8s.io', volumeHandle: 'other' };
    });
    expect(errs).toHaveLength(1);
    expect(errs[0]).toMatch(
      /^spec\.persistentvolumesource: Forbidden: spec\.persistentvolumesource is immutable after creation\n/,
    );
  });

  it('a CSI volume may gain a controllerExpandSecretRef', () => {
    const { errs } = update((o) => {
      o.spec.csi = {
        driver: 'hostpath.csi.k8s.io',
        volumeHandle: 'v1',
        controllerExpandSecretRef: { name: 's', namespace: 'ns' },
      };
    });
    expect(errs).toEqual([]);
  });

  it('volumeMode is immutable', () => {
    expect(update((o) => void (o.spec.volumeMode = 'Block')).errs).toEqual([
      'volumeMode: Invalid value: "Block": field is immutable',
    ]);
  });

  it('nodeAffinity may be set once, then is immutable', () => {
    const aff = {
      required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'k', operator: 'In', values: ['a'] }] }] },
    };
    expect(update((o) => void (o.spec.nodeAffinity = aff)).errs).toEqual([]);
    const withAff = clone(stored) as KubeObject & { spec: Record<string, unknown> };
    withAff.spec.nodeAffinity = aff;
    const changed = clone(withAff) as KubeObject & { spec: Record<string, unknown> };
    changed.spec.nodeAffinity = {
      required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'k', operator: 'In', values: ['b'] }] }] },
    };
    const errs = texts(def.validateUpdate(changed, withAff, admission()));
    expect(errs).toEqual([
      expect.stringMatching(
        /^nodeAffinity: Invalid value: .*: field is immutable, except for updating from beta label to GA$/,
      ),
    ]);
  });

  it('name is immutable', () => {
    expect(update((o) => void (o.metadata.name = 'other')).errs).toEqual([
      'metadata.name: Invalid value: "other": field is immutable',
    ]);
  });
});

describe('PersistentVolume status update', () => {
  const stored: KubeObject = {
    ...created(pv()),
    status: { phase: 'Available', lastPhaseTransitionTime: '2026-01-01T00:00:00Z' },
  };

  function statusUpdate(status: Record<string, unknown>): KubeObject {
    const o = clone(stored);
    o.status = status;
    (o.spec as Record<string, unknown>).capacity = { storage: '99Gi' };
    def.prepareForStatusUpdate(o, stored, admission());
    return o;
  }

  it.each([
    { name: 'phase change stamps now', status: { phase: 'Bound' }, want: NOW },
    {
      name: 'phase change keeping the old time stamps now',
      status: { phase: 'Bound', lastPhaseTransitionTime: '2026-01-01T00:00:00Z' },
      want: NOW,
    },
    {
      name: 'phase change with a new time keeps it',
      status: { phase: 'Bound', lastPhaseTransitionTime: '2025-05-05T00:00:00Z' },
      want: '2025-05-05T00:00:00Z',
    },
    { name: 'same phase keeps the stored time', status: { phase: 'Available' }, want: '2026-01-01T00:00:00Z' },
  ])('$name', ({ status, want }) => {
    const o = statusUpdate(status);
    expect((o.status as Record<string, unknown>).lastPhaseTransitionTime).toBe(want);
    expect(o.spec).toEqual(stored.spec);
  });

  it('validates only metadata', () => {
    const o = statusUpdate({ phase: 'Whatever' });
    expect(def.validateStatusUpdate(o, stored, admission())).toEqual([]);
  });
});

describe('PersistentVolume table', () => {
  it('has kube 1.30 columns', () => {
    expect(def.columns.map((c) => c.name)).toEqual([
      'Name',
      'Capacity',
      'Access Modes',
      'Reclaim Policy',
      'Status',
      'Claim',
      'StorageClass',
      'VolumeAttributesClass',
      'Reason',
      'Age',
      'VolumeMode',
    ]);
    expect(def.columns.map((c) => c.priority)).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
  });
  it.each([
    {
      name: 'bound',
      o: {
        metadata: { name: 'pv1', creationTimestamp: '2026-01-01T00:00:00Z' },
        spec: {
          capacity: { storage: '1.5Gi' },
          accessModes: ['ReadWriteMany', 'ReadWriteOnce', 'ReadWriteOnce'],
          persistentVolumeReclaimPolicy: 'Retain',
          claimRef: { namespace: 'ns', name: 'c' },
          storageClassName: 'fast',
          volumeMode: 'Filesystem',
        },
        status: { phase: 'Bound' },
      },
      want: ['pv1', '1536Mi', 'RWO,RWX', 'Retain', 'Bound', 'ns/c', 'fast', '<unset>', '', '5m', 'Filesystem'],
    },
    {
      name: 'terminating, beta class annotation, no mode',
      o: {
        metadata: {
          name: 'pv2',
          creationTimestamp: '2026-01-01T00:00:00Z',
          deletionTimestamp: '2026-01-01T00:04:00Z',
          annotations: { 'volume.beta.kubernetes.io/storage-class': 'old' },
        },
        spec: { accessModes: ['ReadWriteOncePod'], storageClassName: 'fast' },
        status: { phase: 'Released', reason: 'Oops' },
      },
      want: ['pv2', '0', 'RWOP', '', 'Terminating', '', 'old', '<unset>', 'Oops', '5m', '<unset>'],
    },
  ])('$name', ({ o, want }) => {
    expect(def.row(o as KubeObject, Date.parse('2026-01-01T00:05:00Z'))).toEqual(want);
  });
  it('access modes string order', () => {
    expect(accessModesString(['ReadWriteOncePod', 'ReadOnlyMany', 'ReadWriteOnce'])).toBe('RWO,ROX,RWOP');
  });
});

describe('PersistentVolume discovery facts', () => {
  it('is cluster-scoped with shortName pv and a status subresource', () => {
    expect(def).toMatchObject({
      group: '',
      version: 'v1',
      plural: 'persistentvolumes',
      singular: 'persistentvolume',
      namespaced: false,
      hasStatus: true,
      shortNames: ['pv'],
      listKind: 'PersistentVolumeList',
    });
    expect(Object.keys(def.fieldSelectors)).toEqual(['name']);
  });
});
