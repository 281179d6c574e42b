import { describe, expect, it } from 'vitest';
import { ctx, NOW, obj, texts } from './core.test-kit.js';
import { leaseResource as lease } from './lease.js';

const mk = (spec: Record<string, unknown>) => obj('Lease', 'stowage-controllers', { spec }, 'kube-system');

describe('lease', () => {
  it('discovery shape', () => {
    expect(lease).toMatchObject({
      group: 'coordination.k8s.io',
      plural: 'leases',
      shortNames: [],
      namespaced: true,
      hasStatus: false,
    });
    expect(lease.schema['x-kubernetes-group-version-kind']).toEqual([
      { group: 'coordination.k8s.io', version: 'v1', kind: 'Lease' },
    ]);
  });

  it.each([
    ['valid', { holderIdentity: 'a', leaseDurationSeconds: 15, leaseTransitions: 0 }, []],
    [
      'zero duration',
      { leaseDurationSeconds: 0 },
      ['spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0'],
    ],
    [
      'negative transitions',
      { leaseTransitions: -1 },
      ['spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0'],
    ],
  ])('validation: %s', (_n, spec, want) => {
    expect(texts(lease.validateCreate(mk(spec), ctx()))).toEqual(want);
    expect(texts(lease.validateUpdate(mk(spec), mk({}), ctx()))).toEqual(want);
  });

  it('prints NAME HOLDER AGE', () => {
    expect(lease.columns.map((c) => c.name)).toEqual(['Name', 'Holder', 'Age']);
    expect(lease.row(mk({ holderIdentity: 'host-1_abc' }), NOW)).toEqual(['stowage-controllers', 'host-1_abc', '5m']);
    expect(lease.row(mk({}), NOW)).toEqual(['stowage-controllers', '', '5m']);
  });
});
