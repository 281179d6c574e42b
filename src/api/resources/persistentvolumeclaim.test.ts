import { describe, expect, it } from 'vitest';
import { HttpError } from '../status.js';
import { persistentVolumeClaimResource as def, pickDefaultStorageClass } from './persistentvolumeclaim.js';
import type { AdmissionContext, KubeObject } from './types.js';
import { admission, clone, texts } from './storage.test-kit.js';

type Obj = KubeObject & { spec: Record<string, unknown>; status?: Record<string, unknown> };

function pvc(spec: Record<string, unknown> = {}, meta: Record<string, unknown> = {}): Obj {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: 'c1', namespace: 'ns', ...meta },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...spec },
  };
}

function sc(name: string, created: string, opts: { isDefault?: 'ga' | 'beta'; expand?: boolean } = {}): KubeObject {
  const annotations: Record<string, string> = {};
  if (opts.isDefault === 'ga') annotations['storageclass.kubernetes.io/is-default-class'] = 'true';
  if (opts.isDefault === 'beta') annotations['storageclass.beta.kubernetes.io/is-default-class'] = 'true';
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name, creationTimestamp: created, annotations },
    provisioner: 'hostpath.csi.k8s.io',
    ...(opts.expand !== undefined ? { allowVolumeExpansion: opts.expand } : {}),
  };
}

function created(o: Obj, ctx: AdmissionContext = admission()): Obj {
  const c = clone(o);
  def.prepareForCreate(c, ctx);
  def.mutatingAdmission?.(c, undefined, ctx);
  return c;
}

describe('PersistentVolumeClaim create', () => {
  it('defaults volumeMode, starts Pending, adds pvc-protection', () => {
    const c = created({ ...pvc(), status: { phase: 'Bound' } });
    expect(c.spec.volumeMode).toBe('Filesystem');
    expect(c.status).toEqual({ phase: 'Pending' });
    expect(c.metadata.finalizers).toEqual(['kubernetes.io/pvc-protection']);
    expect(def.validateCreate(c, admission())).toEqual([]);
  });

  describe('default StorageClass', () => {
    const classes = [
      sc('old', '2026-01-01T00:00:00Z', { isDefault: 'ga' }),
      sc('newer-b', '2026-01-02T00:00:00Z', { isDefault: 'beta' }),
      sc('newer-a', '2026-01-02T00:00:00Z', { isDefault: 'ga' }),
      sc('newest-not-default', '2026-01-03T00:00:00Z'),
    ];
    it('the newest default wins, then the lowest name', () => {
      expect(pickDefaultStorageClass(classes)?.metadata.name).toBe('newer-a');
      expect(pickDefaultStorageClass([classes[3]!])).toBeUndefined();
    });
    it.each([
      { name: 'unset → default', spec: {}, meta: {}, want: 'newer-a' },
      { name: 'empty string stays empty', spec: { storageClassName: '' }, meta: {}, want: '' },
      { name: 'explicit stays', spec: { storageClassName: 'x' }, meta: {}, want: 'x' },
      {
        name: 'beta annotation counts as a class',
        spec: {},
        meta: { annotations: { 'volume.beta.kubernetes.io/storage-class': 'y' } },
        want: undefined,
      },
    ])('$name', ({ spec, meta, want }) => {
      expect(created(pvc(spec, meta), admission(classes)).spec.storageClassName).toBe(want);
    });
    it('no default class: left unset', () => {
      expect(created(pvc(), admission([classes[3]!])).spec.storageClassName).toBeUndefined();
    });
  });

  it('mirrors dataSource into dataSourceRef and drops unsupported dataSources', () => {
    const c = created(pvc({ dataSource: { kind: 'PersistentVolumeClaim', name: 'src' } }));
    expect(c.spec.dataSourceRef).toEqual({ kind: 'PersistentVolumeClaim', name: 'src' });
    const d = created(pvc({ dataSource: { apiGroup: 'example.com', kind: 'Foo', name: 'src' } }));
    expect(d.spec.dataSource).toBeUndefined();
    const e = created(pvc({ dataSourceRef: { apiGroup: 'example.com', kind: 'Foo', name: 'src' } }));
    expect(e.spec.dataSource).toEqual({ apiGroup: 'example.com', kind: 'Foo', name: 'src' });
  });

  it.each([
    {
      name: 'no access modes',
      spec: { accessModes: [] },
      want: ['spec.accessModes: Required value: at least 1 access mode is required'],
    },
    {
      name: 'bad access mode',
      spec: { accessModes: ['RWO'] },
      want: [
        'spec.accessModes: Unsupported value: "RWO": supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"',
      ],
    },
    {
      name: 'RWOP with others',
      spec: { accessModes: ['ReadWriteOncePod', 'ReadWriteOnce'] },
      want: ['spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes'],
    },
    {
      name: 'no storage request',
      spec: { resources: { requests: {} } },
      want: ['spec.resources[storage]: Required value'],
    },
    {
      name: 'zero storage',
      spec: { resources: { requests: { storage: '0' } } },
      want: ['spec.resources[storage]: Invalid value: "0": must be greater than zero'],
    },
    {
      name: 'volume mode',
      spec: { volumeMode: 'Raw' },
      want: ['spec.volumeMode: Unsupported value: "Raw": supported values: "Block", "Filesystem"'],
    },
    {
      name: 'class name',
      spec: { storageClassName: 'A' },
      want: [expect.stringContaining('spec.storageClassName: Invalid value: "A": a lowercase RFC 1123 subdomain')],
    },
    {
      name: 'selector',
      spec: { selector: { matchExpressions: [{ key: 'a', operator: 'In' }] } },
      want: [
        "spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
      ],
    },
    {
      name: 'dataSourceRef to a core kind other than PVC',
      spec: { dataSourceRef: { kind: 'Secret', name: 's' } },
      want: [
        'spec.dataSource: Invalid value: "Secret": must be \'PersistentVolumeClaim\' when referencing the default apiGroup',
        'spec.dataSourceRef: Invalid value: "Secret": must be \'PersistentVolumeClaim\' when referencing the default apiGroup',
      ],
    },
    {
      name: 'dataSource and dataSourceRef differ',
      spec: {
        dataSource: { kind: 'PersistentVolumeClaim', name: 'a' },
        dataSourceRef: { kind: 'PersistentVolumeClaim', name: 'b' },
      },
      want: ['spec: Invalid value: spec.dataSource: must match dataSourceRef'],
    },
    {
      name: 'dataSourceRef name',
      spec: { dataSourceRef: { kind: 'PersistentVolumeClaim' } },
      want: ['spec.dataSource.name: Required value', 'spec.dataSourceRef.name: Required value'],
    },
  ])('$name', ({ spec, want }) => {
    expect(texts(def.validateCreate(created(pvc(spec)), admission()))).toEqual(want);
  });

  it('requires a namespace', () => {
    const o = created(pvc());
    delete o.metadata.namespace;
    expect(texts(def.validateCreate(o, admission()))).toEqual(['metadata.namespace: Required value']);
  });
});

function refusal(f: () => unknown): HttpError {
  try {
    f();
  } catch (e) {
    if (e instanceof HttpError) return e;
    throw e;
  }
  throw new Error('expected a refusal');
}

describe('PersistentVolumeClaim update', () => {
  const bound: Obj = (() => {
    const c = created(pvc({ storageClassName: 'fast' }));
    c.metadata.resourceVersion = '3';
    c.spec.volumeName = 'pv1';
    c.status = { phase: 'Bound', capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'] };
    return c;
  })();
  const pending: Obj = (() => {
    const c = created(pvc());
    c.metadata.resourceVersion = '3';
    return c;
  })();

  function update(stored: Obj, mutate: (o: Obj) => void, ctx = admission()): string[] {
    const o = clone(stored);
    mutate(o);
    def.prepareForUpdate(o, stored, ctx);
    return texts(def.validateUpdate(o, stored, ctx));
  }

  it('keeps the stored status', () => {
    const o = clone(bound);
    o.status = { phase: 'Lost' };
    def.prepareForUpdate(o, bound, admission());
    expect(o.status).toEqual(bound.status);
  });

  it('spec is immutable except requests for bound claims', () => {
    const errs = update(bound, (o) => void (o.spec.accessModes = ['ReadOnlyMany']));
    expect(errs).toHaveLength(1);
    expect(errs[0]).toMatch(
      /^spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n/,
    );
  });

  it('quantities compare by value, not text', () => {
    expect(update(pending, (o) => void (o.spec.resources = { requests: { storage: '1024Mi' } }))).toEqual([]);
    const c = created(pvc({ resources: { requests: { storage: '1.5Gi' } } }));
    expect(c.spec.resources).toEqual({ requests: { storage: '1536Mi' } });
  });

  it('an unbound claim may not change its request', () => {
    const errs = update(pending, (o) => void (o.spec.resources = { requests: { storage: '2Gi' } }));
    expect(errs[0]).toMatch(/^spec: Forbidden: spec is immutable after creation/);
  });

  it('volumeName may be set once', () => {
    expect(update(pending, (o) => void (o.spec.volumeName = 'pv1'))).toEqual([]);
    const errs = update(bound, (o) => void (o.spec.volumeName = 'pv2'));
    expect(errs[0]).toMatch(/^spec: Forbidden: spec is immutable/);
  });

  it('storageClassName may be set once from nil (retroactive default class)', () => {
    expect(update(pending, (o) => void (o.spec.storageClassName = 'fast'))).toEqual([]);
    const withEmpty = clone(pending);
    withEmpty.spec.storageClassName = '';
    expect(update(withEmpty, (o) => void (o.spec.storageClassName = 'fast'))[0]).toMatch(/^spec: Forbidden/);
  });

  it('volumeMode is immutable', () => {
    const errs = update(pending, (o) => void (o.spec.volumeMode = 'Block'));
    expect(errs).toContain('volumeMode: Invalid value: "Block": field is immutable');
  });

  it('shrinking is forbidden (RecoverVolumeExpansionFailure is off)', () => {
    expect(update(bound, (o) => void (o.spec.resources = { requests: { storage: '512Mi' } }))).toEqual([
      'spec.resources.requests.storage: Forbidden: field can not be less than previous value',
    ]);
  });

  describe('resize admission', () => {
    const grow = (o: Obj): void => void (o.spec.resources = { requests: { storage: '2Gi' } });
    it('allowed when the class allows expansion', () => {
      expect(update(bound, grow, admission([sc('fast', '2026-01-01T00:00:00Z', { expand: true })]))).toEqual([]);
    });
    it.each([
      { name: 'class without allowVolumeExpansion', classes: [sc('fast', '2026-01-01T00:00:00Z')] },
      { name: 'class disallows', classes: [sc('fast', '2026-01-01T00:00:00Z', { expand: false })] },
      { name: 'class missing', classes: [] },
    ])('forbidden: $name', ({ classes }) => {
      const err = refusal(() => update(bound, grow, admission(classes)));
      expect(err).toMatchObject({
        httpStatus: 403,
        reason: 'Forbidden',
        message:
          'persistentvolumeclaims "c1" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize',
        details: { name: 'c1', kind: 'persistentvolumeclaims' },
      });
    });
    it('forbidden for a claim without class', () => {
      const noClass = clone(bound);
      delete noClass.spec.storageClassName;
      expect(refusal(() => update(noClass, grow)).httpStatus).toBe(403);
    });
    it('an unbound claim is refused by validation before admission runs', () => {
      const stored = clone(bound);
      stored.status = { phase: 'Pending' };
      const errs = update(stored, grow, admission([sc('fast', '2026-01-01T00:00:00Z', { expand: true })]));
      expect(errs[0]).toMatch(/^spec: Forbidden: spec is immutable/);
    });
  });
});

describe('PersistentVolumeClaim status update', () => {
  const stored: Obj = { ...created(pvc()), status: { phase: 'Pending' } };
  function statusUpdate(status: Record<string, unknown>): Obj {
    const o = clone(stored);
    o.status = status;
    o.spec.accessModes = ['ReadOnlyMany'];
    def.prepareForStatusUpdate(o, stored, admission());
    return o;
  }
  it('keeps the stored spec and allocatedResources (RecoverVolumeExpansionFailure on)', () => {
    const o = statusUpdate({ phase: 'Bound', capacity: { storage: '1Gi' }, allocatedResources: { storage: '1Gi' } });
    expect(o.spec).toEqual(stored.spec);
    expect(o.status).toEqual({ phase: 'Bound', capacity: { storage: '1Gi' }, allocatedResources: { storage: '1Gi' } });
    expect(def.validateStatusUpdate(o, stored, admission())).toEqual([]);
  });
  it('omits empty status maps and lists, as Go omitempty does (a resize status nulled to {})', () => {
    const o = statusUpdate({
      phase: 'Bound',
      capacity: { storage: '1Gi' },
      accessModes: [],
      conditions: [],
      allocatedResourceStatuses: {},
      allocatedResources: {},
    });
    expect(o.status).toEqual({ phase: 'Bound', capacity: { storage: '1Gi' } });
  });
  it('validates capacity shape', () => {
    const o = statusUpdate({ phase: 'Bound', capacity: { storage: '-1' } });
    expect(texts(def.validateStatusUpdate(o, stored, admission()))).toEqual([
      'status.capacity[storage]: Invalid value: -1: must be a valid resource quantity',
    ]);
  });
  it('validates allocatedResources once the stored claim has them', () => {
    const withAlloc: Obj = {
      ...clone(stored),
      status: {
        phase: 'Bound',
        allocatedResources: { storage: '1Gi' },
        allocatedResourceStatuses: { storage: 'NodeResizePending' },
      },
    };
    const o = clone(withAlloc);
    o.status = { phase: 'Bound', allocatedResources: { cpu: '1' }, allocatedResourceStatuses: { storage: 'Weird' } };
    def.prepareForStatusUpdate(o, withAlloc, admission());
    expect(texts(def.validateStatusUpdate(o, withAlloc, admission()))).toEqual([
      'status.allocatedResourceStatus: Unsupported value: "storage": supported values: "ControllerResizeFailed", "ControllerResizeInProgress", "NodeResizeFailed", "NodeResizeInProgress", "NodeResizePending"',
      'status.allocatedResources: Unsupported value: "cpu": supported values: "storage"',
    ]);
  });
});

describe('PersistentVolumeClaim table', () => {
  it('has kube 1.30 columns', () => {
    expect(def.columns.map((c) => c.name)).toEqual([
      'Name',
      'Status',
      'Volume',
      'Capacity',
      'Access Modes',
      'StorageClass',
      'VolumeAttributesClass',
      'Age',
      'VolumeMode',
    ]);
    expect(def.columns.at(-1)?.priority).toBe(1);
  });
  const now = Date.parse('2026-01-01T01:00:00Z');
  it.each([
    {
      name: "bound shows the volume's capacity and modes",
      o: {
        metadata: { name: 'c', creationTimestamp: '2026-01-01T00:00:00Z' },
        spec: {
          volumeName: 'pv1',
          storageClassName: 'fast',
          volumeMode: 'Filesystem',
          resources: { requests: { storage: '1Gi' } },
        },
        status: { phase: 'Bound', capacity: { storage: '2048Mi' }, accessModes: ['ReadWriteOnce'] },
      },
      want: ['c', 'Bound', 'pv1', '2Gi', 'RWO', 'fast', '<unset>', '60m', 'Filesystem'],
    },
    {
      name: 'pending shows no capacity',
      o: {
        metadata: { name: 'c', creationTimestamp: '2026-01-01T00:00:00Z' },
        spec: { resources: { requests: { storage: '1Gi' } } },
        status: { phase: 'Pending' },
      },
      want: ['c', 'Pending', '', '', '', '', '<unset>', '60m', '<unset>'],
    },
    {
      name: 'terminating',
      o: {
        metadata: { name: 'c', creationTimestamp: '2026-01-01T00:00:00Z', deletionTimestamp: '2026-01-01T00:30:00Z' },
        spec: { volumeName: 'pv1' },
        status: { phase: 'Bound' },
      },
      want: ['c', 'Terminating', 'pv1', '0', '', '', '<unset>', '60m', '<unset>'],
    },
  ])('$name', ({ o, want }) => expect(def.row(o as KubeObject, now)).toEqual(want));
});
