import { describe, expect, it } from 'vitest';
import { causeText } from '../resources/fielderrors.js';
import type { CRD } from './types.js';
import { validateCRDSpec, validateCRDUpdate } from './validation.js';

const base = (): CRD => ({
  metadata: { name: 'foos.a.io' },
  spec: {
    group: 'a.io',
    scope: 'Namespaced',
    names: { plural: 'foos', singular: 'foo', kind: 'Foo', listKind: 'FooList' },
    versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } }],
  },
});
const errs = (mutate: (c: CRD) => void): string[] => {
  const c = base();
  mutate(c);
  return validateCRDSpec(c).map(causeText);
};

describe('CRD validation', () => {
  it('accepts a minimal CRD', () => expect(errs(() => {})).toEqual([]));
  it.each([
    {
      name: 'scope',
      f: (c: CRD) => (c.spec.scope = 'Global' as never),
      want: 'spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"',
    },
    {
      name: 'plural label',
      f: (c: CRD) => (c.spec.names.plural = 'Foos'),
      want: 'spec.names.plural: Invalid value: "Foos": a DNS-1035 label must consist of lower case alphanumeric characters',
    },
    {
      name: 'listKind = kind',
      f: (c: CRD) => (c.spec.names.listKind = 'Foo'),
      want: 'spec.names.listKind: Invalid value: "Foo": kind and listKind may not be the same',
    },
    {
      name: 'no served version',
      f: (c: CRD) => (c.spec.versions[0]!.served = false),
      want: 'must have at least one version marked as served',
    },
    {
      name: 'two storage versions',
      f: (c: CRD) =>
        c.spec.versions.push({
          name: 'v2',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object' } },
        }),
      want: 'must have exactly one version marked as storage version',
    },
    {
      name: 'duplicate version',
      f: (c: CRD) =>
        c.spec.versions.push({
          name: 'v1',
          served: true,
          storage: false,
          schema: { openAPIV3Schema: { type: 'object' } },
        }),
      want: 'spec.versions[1].name: Duplicate value: "v1"',
    },
    {
      name: 'schema required',
      f: (c: CRD) => delete c.spec.versions[0]!.schema,
      want: 'spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required',
    },
    {
      name: 'printer column type',
      f: (c: CRD) => (c.spec.versions[0]!.additionalPrinterColumns = [{ name: 'X', type: 'float', jsonPath: '.x' }]),
      want: 'spec.versions[0].additionalPrinterColumns[0].type: Unsupported value: "float"',
    },
    {
      name: 'scale path',
      f: (c: CRD) =>
        (c.spec.versions[0]!.subresources = {
          scale: { specReplicasPath: '.replicas', statusReplicasPath: '.status.replicas' },
        }),
      want: 'spec.versions[0].subresources.scale.specReplicasPath: Invalid value: ".replicas": should be a json path under .spec',
    },
    {
      name: 'deprecationWarning without deprecated',
      f: (c: CRD) => (c.spec.versions[0]!.deprecationWarning = 'x'),
      want: 'spec.versions[0].deprecationWarning: Invalid value: "x": can only be set for deprecated versions',
    },
    {
      name: 'webhook',
      f: (c: CRD) => (c.spec.conversion = { strategy: 'Webhook' }),
      want: 'spec.conversion.strategy: Forbidden: Webhook conversion is not supported by this server',
    },
  ])('$name', ({ f, want }) => {
    expect(errs(f).some((e) => e.startsWith(want) || e.includes(want))).toBe(true);
  });

  it('keeps group and scope and the stored versions on update', () => {
    const old = base();
    old.status = { storedVersions: ['v1'] };
    const next = base();
    next.spec.scope = 'Cluster';
    next.spec.versions = [{ name: 'v2', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } }];
    next.status = { storedVersions: ['v1', 'v2'] };
    const out = validateCRDUpdate(next, old).map(causeText);
    expect(out).toContain('spec.scope: Invalid value: "Cluster": field is immutable');
    expect(out).toContain('status.storedVersions[0]: Invalid value: "v1": must appear in spec.versions');
  });
});
