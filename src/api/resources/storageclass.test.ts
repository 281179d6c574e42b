import { describe, expect, it } from 'vitest';
import { storageClassResource as def } from './storageclass.js';
import { formatInvalidMessage } from './common.js';
import type { KubeObject } from './types.js';
import { admission, clone, texts } from './storage.test-kit.js';

function sc(extra: Record<string, unknown> = {}, meta: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name: 'fast', ...meta },
    provisioner: 'hostpath.csi.k8s.io',
    ...extra,
  };
}

function created(o: KubeObject): KubeObject {
  const c = clone(o);
  def.prepareForCreate(c, admission());
  return c;
}

describe('StorageClass create', () => {
  it('defaults reclaimPolicy Delete and volumeBindingMode Immediate', () => {
    const c = created(sc());
    expect(c).toMatchObject({ reclaimPolicy: 'Delete', volumeBindingMode: 'Immediate' });
    expect(def.validateCreate(c, admission())).toEqual([]);
  });

  it.each([
    { name: 'provisioner required', extra: { provisioner: '' }, want: ['provisioner: Required value'] },
    {
      name: 'provisioner qualified name',
      extra: { provisioner: 'a/b/c' },
      want: [expect.stringContaining('provisioner: Invalid value: "a/b/c": a qualified name must consist')],
    },
    {
      name: 'reclaim policy',
      extra: { reclaimPolicy: 'Recycle' },
      want: ['reclaimPolicy: Unsupported value: "Recycle": supported values: "Delete", "Retain"'],
    },
    {
      name: 'binding mode',
      extra: { volumeBindingMode: 'Later' },
      want: ['volumeBindingMode: Unsupported value: "Later": supported values: "Immediate", "WaitForFirstConsumer"'],
    },
    {
      name: 'empty parameter key',
      extra: { parameters: { '': 'x' } },
      want: ['parameters: Invalid value: "": field can not be empty.'],
    },
    {
      name: 'topology term values required',
      extra: { allowedTopologies: [{ matchLabelExpressions: [{ key: 'topology.kubernetes.io/zone', values: [] }] }] },
      want: ['allowedTopologies[0].matchLabelExpressions[0].values: Required value'],
    },
    {
      name: 'duplicate topology terms',
      extra: {
        allowedTopologies: [
          { matchLabelExpressions: [{ key: 'z', values: ['a', 'b'] }] },
          { matchLabelExpressions: [{ key: 'z', values: ['b', 'a'] }] },
        ],
      },
      want: ['allowedTopologies[1].matchLabelExpressions: Duplicate value: ""'],
    },
    {
      name: 'duplicate topology key and value',
      extra: {
        allowedTopologies: [
          {
            matchLabelExpressions: [
              { key: 'z', values: ['a', 'a'] },
              { key: 'z', values: ['c'] },
            ],
          },
        ],
      },
      want: [
        'allowedTopologies[0].matchLabelExpressions[0].values[1]: Duplicate value: "a"',
        'allowedTopologies[0].matchLabelExpressions[1].key: Duplicate value: "z"',
      ],
    },
  ])('$name', ({ extra, want }) => {
    expect(texts(def.validateCreate(created(sc(extra)), admission()))).toEqual(want);
  });

  it('message is qualified with the group', () => {
    const causes = def.validateCreate(created(sc({ provisioner: '' })), admission());
    expect(formatInvalidMessage(def.kind, 'fast', causes)).toBe(
      'StorageClass.storage.k8s.io "fast" is invalid: provisioner: Required value',
    );
  });
});

describe('StorageClass update', () => {
  const stored = created(sc({ parameters: { a: '1' }, allowVolumeExpansion: false }));
  function update(mutate: (o: KubeObject) => void): string[] {
    const o = clone(stored);
    mutate(o);
    def.prepareForUpdate(o, stored, admission());
    return texts(def.validateUpdate(o, stored, admission()));
  }
  it.each([
    {
      name: 'parameters',
      m: (o: KubeObject) => void (o.parameters = { a: '2' }),
      want: ['parameters: Forbidden: updates to parameters are forbidden.'],
    },
    {
      name: 'provisioner',
      m: (o: KubeObject) => void (o.provisioner = 'other.example.com'),
      want: ['provisioner: Forbidden: updates to provisioner are forbidden.'],
    },
    {
      name: 'reclaimPolicy',
      m: (o: KubeObject) => void (o.reclaimPolicy = 'Retain'),
      want: ['reclaimPolicy: Forbidden: updates to reclaimPolicy are forbidden.'],
    },
    {
      name: 'volumeBindingMode',
      m: (o: KubeObject) => void (o.volumeBindingMode = 'WaitForFirstConsumer'),
      want: ['volumeBindingMode: Invalid value: "WaitForFirstConsumer": field is immutable'],
    },
    { name: 'allowVolumeExpansion is mutable', m: (o: KubeObject) => void (o.allowVolumeExpansion = true), want: [] },
    {
      name: 'defaults make omitted fields equal',
      m: (o: KubeObject) => void (delete o.reclaimPolicy, delete o.volumeBindingMode),
      want: [],
    },
    {
      name: 'labels and annotations are mutable',
      m: (o: KubeObject) => void (o.metadata.annotations = { 'storageclass.kubernetes.io/is-default-class': 'true' }),
      want: [],
    },
  ])('$name', ({ m, want }) => expect(update(m)).toEqual(want));
});

describe('StorageClass table', () => {
  it('has kube columns', () => {
    expect(def.columns.map((c) => c.name)).toEqual([
      'Name',
      'Provisioner',
      'ReclaimPolicy',
      'VolumeBindingMode',
      'AllowVolumeExpansion',
      'Age',
    ]);
    expect(def.shortNames).toEqual(['sc']);
  });
  const now = Date.parse('2026-01-01T00:00:30Z');
  it.each([
    {
      name: 'default class gets (default)',
      o: sc(
        { reclaimPolicy: 'Retain', volumeBindingMode: 'WaitForFirstConsumer', allowVolumeExpansion: true },
        {
          creationTimestamp: '2026-01-01T00:00:00Z',
          annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' },
        },
      ),
      want: ['fast (default)', 'hostpath.csi.k8s.io', 'Retain', 'WaitForFirstConsumer', true, '30s'],
    },
    {
      name: 'beta default annotation; unset fields print defaults',
      o: sc(
        {},
        {
          creationTimestamp: '2026-01-01T00:00:00Z',
          annotations: { 'storageclass.beta.kubernetes.io/is-default-class': 'true' },
        },
      ),
      want: ['fast (default)', 'hostpath.csi.k8s.io', 'Delete', 'Immediate', false, '30s'],
    },
    {
      name: 'only "true" counts',
      o: sc(
        {},
        {
          creationTimestamp: '2026-01-01T00:00:00Z',
          annotations: { 'storageclass.kubernetes.io/is-default-class': 'yes' },
        },
      ),
      want: ['fast', 'hostpath.csi.k8s.io', 'Delete', 'Immediate', false, '30s'],
    },
  ])('$name', ({ o, want }) => expect(def.row(o, now)).toEqual(want));
});
