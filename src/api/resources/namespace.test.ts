import { describe, expect, it } from 'vitest';
import { ctx, NOW, obj, texts } from './core.test-kit.js';
import { namespaceResource as ns } from './namespace.js';

describe('namespace', () => {
  it('discovery shape', () => {
    expect(ns).toMatchObject({
      plural: 'namespaces',
      singular: 'namespace',
      shortNames: ['ns'],
      namespaced: false,
      hasStatus: true,
    });
    expect(ns.verbs).not.toContain('deletecollection');
  });

  it('create: phase Active, kubernetes finalizer, name label', () => {
    const o = obj('Namespace', 'team-a', { status: { phase: 'Terminating' } });
    ns.prepareForCreate(o, ctx());
    expect(o.status).toEqual({ phase: 'Active' });
    expect(o.spec).toEqual({ finalizers: ['kubernetes'] });
    expect(o.metadata.labels).toEqual({ 'kubernetes.io/metadata.name': 'team-a' });
    ns.prepareForCreate(o, ctx());
    expect(o.spec).toEqual({ finalizers: ['kubernetes'] });
    expect(ns.validateCreate(o, ctx())).toEqual([]);
  });

  it.each([
    ['uppercase', 'Team', 'metadata.name: Invalid value: "Team": a lowercase RFC 1123 label'],
    ['dots are not labels', 'a.b', 'metadata.name: Invalid value: "a.b": a lowercase RFC 1123 label'],
    ['too long', 'a'.repeat(64), 'must be no more than 63 characters'],
  ])('rejects a name: %s', (_n, name, want) => {
    const o = obj('Namespace', name);
    ns.prepareForCreate(o, ctx());
    expect(texts(ns.validateCreate(o, ctx())).join('\n')).toContain(want);
  });

  it('update keeps finalizers and status, re-sets the name label', () => {
    const old = obj('Namespace', 'a', { spec: { finalizers: ['kubernetes'] }, status: { phase: 'Active' } });
    old.metadata.labels = { 'kubernetes.io/metadata.name': 'a' };
    const next = obj('Namespace', 'a', { spec: { finalizers: [] }, status: { phase: 'Terminating' } });
    next.metadata.labels = { x: 'y' };
    ns.prepareForUpdate(next, old, ctx());
    expect(next.spec).toEqual({ finalizers: ['kubernetes'] });
    expect(next.status).toEqual({ phase: 'Active' });
    expect(next.metadata.labels).toEqual({ x: 'y', 'kubernetes.io/metadata.name': 'a' });
    expect(ns.validateUpdate(next, old, ctx())).toEqual([]);
  });

  it.each([
    ['Active without deletion', undefined, 'Active', []],
    [
      'Terminating without deletion',
      undefined,
      'Terminating',
      ["status.phase: Forbidden: may only be 'Active' if `deletionTimestamp` is empty"],
    ],
    [
      'Active while deleting',
      '2024-05-01T12:00:00Z',
      'Active',
      ["status.phase: Forbidden: may only be 'Terminating' if `deletionTimestamp` is not empty"],
    ],
    [
      'unknown phase',
      undefined,
      'Gone',
      ['status.phase: Unsupported value: "Gone": supported values: "Active", "Terminating"'],
    ],
  ])('status update: %s', (_n, deletionTimestamp, phase, want) => {
    const old = obj('Namespace', 'a', { spec: { finalizers: ['kubernetes'] }, status: { phase: 'Active' } });
    if (deletionTimestamp) old.metadata.deletionTimestamp = deletionTimestamp;
    const next = structuredClone(old);
    next.status = { phase };
    next.spec = {};
    ns.prepareForStatusUpdate(next, old, ctx());
    expect(next.spec).toEqual({ finalizers: ['kubernetes'] });
    expect(texts(ns.validateStatusUpdate(next, old, ctx()))).toEqual(want);
  });

  it('prints NAME STATUS AGE and selects status.phase', () => {
    const o = obj('Namespace', 'a', { status: { phase: 'Active' } });
    expect(ns.columns.map((c) => c.name)).toEqual(['Name', 'Status', 'Age']);
    expect(ns.row(o, NOW)).toEqual(['a', 'Active', '5m']);
    expect(ns.fieldSelectors['status.phase']?.(o)).toBe('Active');
  });

  it('patch meta comes from the schema', () => {
    expect(ns.patchMeta(['status', 'conditions'])).toEqual({ strategy: 'merge', mergeKey: 'type' });
  });
});
