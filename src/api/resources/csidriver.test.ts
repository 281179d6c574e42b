import { describe, expect, it } from 'vitest';
import { csiDriverResource as def } from './csidriver.js';
import type { KubeObject } from './types.js';
import { admission, clone, texts } from './storage.test-kit.js';

type Obj = KubeObject & { spec: Record<string, unknown> };

function drv(spec: Record<string, unknown> = {}, name = 'hostpath.csi.k8s.io'): Obj {
  return { apiVersion: 'storage.k8s.io/v1', kind: 'CSIDriver', metadata: { name }, spec };
}

function created(o: Obj): Obj {
  const c = clone(o);
  def.prepareForCreate(c, admission());
  return c;
}

describe('CSIDriver create', () => {
  it('applies the v1.30 defaults', () => {
    expect(created(drv()).spec).toEqual({
      attachRequired: true,
      podInfoOnMount: false,
      storageCapacity: false,
      fsGroupPolicy: 'ReadWriteOnceWithFSType',
      volumeLifecycleModes: ['Persistent'],
      requiresRepublish: false,
      seLinuxMount: false,
    });
    expect(def.validateCreate(created(drv()), admission())).toEqual([]);
  });

  it('keeps explicit values', () => {
    expect(created(drv({ attachRequired: false, volumeLifecycleModes: ['Ephemeral'] })).spec).toMatchObject({
      attachRequired: false,
      volumeLifecycleModes: ['Ephemeral'],
    });
  });

  it.each([
    {
      name: 'name',
      o: drv({}, 'Bad Name'),
      want: [expect.stringContaining('metadata.name: Invalid value: "Bad Name"')],
    },
    {
      name: 'fsGroupPolicy',
      o: drv({ fsGroupPolicy: 'Always' }),
      want: [
        'spec.fsGroupPolicy: Unsupported value: "Always": supported values: "File", "None", "ReadWriteOnceWithFSType"',
      ],
    },
    {
      name: 'lifecycle mode',
      o: drv({ volumeLifecycleModes: ['Forever'] }),
      want: ['spec.volumeLifecycleModes: Unsupported value: "Forever": supported values: "Persistent", "Ephemeral"'],
    },
    {
      name: 'token requests',
      o: drv({
        tokenRequests: [
          { audience: 'a', expirationSeconds: 60 },
          { audience: 'a' },
          { audience: 'b', expirationSeconds: 2 ** 33 },
        ],
      }),
      want: [
        'spec.tokenRequests[0].expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes',
        'spec.tokenRequests[1].audience: Duplicate value: "a"',
        'spec.tokenRequests[2].expirationSeconds: Invalid value: 8589934592: may not specify a duration larger than 2^32 seconds',
      ],
    },
  ])('$name', ({ o, want }) => expect(texts(def.validateCreate(created(o), admission()))).toEqual(want));
});

describe('CSIDriver update', () => {
  const stored = created(drv());
  function update(mutate: (o: Obj) => void): string[] {
    const o = clone(stored);
    mutate(o);
    def.prepareForUpdate(o, stored, admission());
    return texts(def.validateUpdate(o, stored, admission()));
  }
  it.each([
    {
      name: 'attachRequired is immutable',
      m: (o: Obj) => void (o.spec.attachRequired = false),
      want: ['spec.attachedRequired: Invalid value: false: field is immutable'],
    },
    {
      name: 'volumeLifecycleModes is immutable',
      m: (o: Obj) => void (o.spec.volumeLifecycleModes = ['Persistent', 'Ephemeral']),
      want: [
        'spec.volumeLifecycleModes: Invalid value: []storage.VolumeLifecycleMode{"Persistent", "Ephemeral"}: field is immutable',
      ],
    },
    { name: 'podInfoOnMount is mutable (1.28+)', m: (o: Obj) => void (o.spec.podInfoOnMount = true), want: [] },
    { name: 'fsGroupPolicy is mutable', m: (o: Obj) => void (o.spec.fsGroupPolicy = 'File'), want: [] },
    {
      name: 'storageCapacity and requiresRepublish are mutable',
      m: (o: Obj) => void ((o.spec.storageCapacity = true), (o.spec.requiresRepublish = true)),
      want: [],
    },
    { name: 'omitted fields default again', m: (o: Obj) => void (o.spec = {}), want: [] },
  ])('$name', ({ m, want }) => expect(update(m)).toEqual(want));
});

describe('CSIDriver generation', () => {
  it('bumps on spec changes only', () => {
    const stored = created(drv());
    const same = clone(stored);
    same.metadata.labels = { a: 'b' };
    def.prepareForUpdate(same, stored, admission());
    expect(same.metadata.generation).toBeUndefined();
    const changed = clone(stored);
    changed.spec.podInfoOnMount = true;
    def.prepareForUpdate(changed, stored, admission());
    expect(changed.metadata.generation).toBe(1);
  });
});

describe('CSIDriver table', () => {
  it('columns', () => {
    expect(def.columns.map((c) => c.name)).toEqual([
      'Name',
      'AttachRequired',
      'PodInfoOnMount',
      'StorageCapacity',
      'TokenRequests',
      'RequiresRepublish',
      'Modes',
      'Age',
    ]);
  });
  it.each([
    {
      o: created(drv()),
      want: ['hostpath.csi.k8s.io', true, false, false, '<unset>', false, 'Persistent', '<unknown>'],
    },
    {
      o: drv({
        attachRequired: false,
        tokenRequests: [{ audience: 'a' }, { audience: 'b' }],
        volumeLifecycleModes: ['Persistent', 'Ephemeral'],
        storageCapacity: true,
      }),
      want: ['hostpath.csi.k8s.io', false, false, true, 'a,b', false, 'Persistent,Ephemeral', '<unknown>'],
    },
    {
      o: drv({ volumeLifecycleModes: [] }),
      want: ['hostpath.csi.k8s.io', true, false, false, '<unset>', false, '<none>', '<unknown>'],
    },
  ])('row %#', ({ o, want }) => expect(def.row(o, 0)).toEqual(want));
});
