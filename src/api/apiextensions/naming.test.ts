import { describe, expect, it } from 'vitest';
import { compareVersions, desiredStatus, nameConflict } from './naming.js';
import type { CRD, CRDNames } from './types.js';

const crd = (name: string, names: CRDNames, accepted?: CRDNames): CRD => ({
  metadata: { name },
  spec: { group: 'g.io', scope: 'Namespaced', names, versions: [{ name: 'v1', served: true, storage: true }] },
  ...(accepted ? { status: { acceptedNames: accepted } } : {}),
});

describe('CRD names and conditions', () => {
  const taken = crd(
    'foos.g.io',
    { plural: 'foos', kind: 'Foo' },
    { plural: 'foos', singular: 'foo', kind: 'Foo', listKind: 'FooList', shortNames: ['f'] },
  );
  it.each([
    { names: { plural: 'foos', kind: 'Bar' }, reason: 'PluralConflict', message: '"foos" is already in use' },
    {
      names: { plural: 'bars', singular: 'foo', kind: 'Bar' },
      reason: 'SingularConflict',
      message: '"foo" is already in use',
    },
    {
      names: { plural: 'bars', kind: 'Bar', shortNames: ['f'] },
      reason: 'ShortNamesConflict',
      message: '"f" is already in use',
    },
    {
      names: { plural: 'bars', singular: 'bar', kind: 'Foo' },
      reason: 'KindConflict',
      message: '"Foo" is already in use',
    },
    {
      names: { plural: 'bars', kind: 'Bar', listKind: 'FooList' },
      reason: 'ListKindConflict',
      message: '"FooList" is already in use',
    },
  ] as Array<{ names: CRDNames; reason: string; message: string }>)('$reason', ({ names, reason, message }) => {
    expect(nameConflict(names, [taken])).toEqual({ reason, message });
  });

  it('accepts free names and establishes; a later conflict keeps Established', () => {
    const c = crd('bars.g.io', { plural: 'bars', kind: 'Bar' });
    const st = desiredStatus(c, [taken], 'T0');
    expect(st.acceptedNames).toEqual({ plural: 'bars', kind: 'Bar' });
    expect(st.conditions).toEqual([
      {
        type: 'NamesAccepted',
        status: 'True',
        reason: 'NoConflicts',
        message: 'no conflicts found',
        lastTransitionTime: 'T0',
      },
      {
        type: 'Established',
        status: 'True',
        reason: 'InitialNamesAccepted',
        message: 'the initial names have been accepted',
        lastTransitionTime: 'T0',
      },
    ]);
    const renamed: CRD = { ...c, spec: { ...c.spec, names: { plural: 'foos', kind: 'Bar' } }, status: st };
    const st2 = desiredStatus(renamed, [taken], 'T1');
    expect(st2.acceptedNames).toEqual({ plural: 'bars', kind: 'Bar' });
    expect(st2.conditions?.find((x) => x.type === 'Established')).toMatchObject({
      status: 'True',
      lastTransitionTime: 'T0',
    });
    expect(st2.conditions?.find((x) => x.type === 'NamesAccepted')).toMatchObject({
      status: 'False',
      reason: 'PluralConflict',
      lastTransitionTime: 'T1',
    });
  });

  it('orders versions as kube does', () => {
    expect(['v1alpha1', 'v2beta1', 'v1', 'foo', 'v1beta2', 'v2', 'v1beta1'].sort(compareVersions)).toEqual([
      'v2',
      'v1',
      'v2beta1',
      'v1beta2',
      'v1beta1',
      'v1alpha1',
      'foo',
    ]);
  });
});
