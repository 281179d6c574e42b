import { describe, expect, it } from 'vitest';
import { schemaFor } from '../openapi/schemas.js';
import type { KubeObject } from '../resources/types.js';
import { ApiConflictError, toStatus } from '../status.js';
import { applyConfig, fieldManagerScope, LAST_APPLIED_ANNOTATION, updateManagedFields } from './fieldmanager.js';
import { FieldSet, pathString } from './fieldset.js';
import { duplicateEntries } from './typed.js';

const pods = fieldManagerScope({ schema: schemaFor('', 'v1', 'Pod'), apiVersion: 'v1', hasStatus: true });
const T0 = '2024-01-01T00:00:00Z';
const T1 = '2024-01-01T00:00:01Z';

type Cfg = { labels?: Record<string, string>; finalizers?: string[]; containers?: Array<Record<string, unknown>> };

function pod(c: Cfg): KubeObject {
  const o: KubeObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } };
  if (c.labels) o.metadata.labels = c.labels;
  if (c.finalizers) o.metadata.finalizers = c.finalizers;
  if (c.containers) o.spec = { containers: c.containers };
  return o;
}

type Step = { apply: string; cfg: Cfg; force?: boolean } | { update: string; cfg: Cfg };

/** Runs writes from an empty pod; returns the final object or the conflict Status of the last step. */
function run(steps: readonly Step[], start?: KubeObject): KubeObject {
  let live: KubeObject | undefined = start;
  for (const s of steps) {
    if ('apply' in s) {
      live = applyConfig(pods, { live, config: pod(s.cfg), manager: s.apply, force: s.force ?? false, now: T1 });
    } else {
      const next = { ...pod(s.cfg), metadata: { ...pod(s.cfg).metadata, managedFields: live?.metadata.managedFields } };
      const mf = updateManagedFields(pods, live, next, next.metadata.managedFields, s.update, T1);
      next.metadata.managedFields = mf;
      if (!mf) delete next.metadata.managedFields;
      live = next;
    }
  }
  return live!;
}

/** manager → its fields as printed paths. */
function owners(o: KubeObject): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const e of (o.metadata.managedFields ?? []) as Array<{
    manager: string;
    operation: string;
    fieldsV1: unknown;
  }>) {
    out[`${e.manager}/${e.operation}`] = FieldSet.fromFieldsV1(e.fieldsV1).paths().map(pathString);
  }
  return out;
}

const c = (name: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  name,
  image: 'img',
  ...extra,
});

describe('server-side apply ownership', () => {
  it.each([
    {
      name: 'two managers applying different fields both own theirs',
      steps: [
        { apply: 'a', cfg: { labels: { x: '1' } } },
        { apply: 'b', cfg: { labels: { y: '2' } } },
      ],
      labels: { x: '1', y: '2' },
      owners: { 'a/Apply': ['.metadata.labels.x'], 'b/Apply': ['.metadata.labels.y'] },
    },
    {
      name: 'the same value applied by two managers is shared; one stopping keeps the field',
      steps: [
        { apply: 'a', cfg: { labels: { x: '1' } } },
        { apply: 'b', cfg: { labels: { x: '1' } } },
        { apply: 'a', cfg: { labels: { z: '3' } } },
      ],
      labels: { x: '1', z: '3' },
      owners: { 'a/Apply': ['.metadata.labels.z'], 'b/Apply': ['.metadata.labels.x'] },
    },
    {
      name: 'a field its sole owner stops applying is removed',
      steps: [
        { apply: 'a', cfg: { labels: { x: '1', y: '2' } } },
        { apply: 'a', cfg: { labels: { x: '1' } } },
      ],
      labels: { x: '1' },
      owners: { 'a/Apply': ['.metadata.labels.x'] },
    },
    {
      name: 'force takes ownership from the other manager',
      steps: [
        { apply: 'a', cfg: { labels: { x: '1', y: '1' } } },
        { apply: 'b', cfg: { labels: { x: '2' } }, force: true },
        { apply: 'a', cfg: { labels: { y: '1' } } },
      ],
      labels: { x: '2', y: '1' },
      owners: { 'a/Apply': ['.metadata.labels.y'], 'b/Apply': ['.metadata.labels.x'] },
    },
    {
      name: 'list-map items merge by key; an item its applier drops goes',
      steps: [
        { apply: 'a', cfg: { containers: [c('one')] } },
        { apply: 'b', cfg: { containers: [c('two')] } },
        { apply: 'a', cfg: { containers: [] } },
      ],
      containers: ['two'],
      owners: {
        'b/Apply': [
          '.spec.containers[name="two"]',
          '.spec.containers[name="two"].image',
          '.spec.containers[name="two"].name',
        ],
      },
    },
    {
      name: 'set items are owned one by one',
      steps: [
        { apply: 'a', cfg: { finalizers: ['f1'] } },
        { apply: 'b', cfg: { finalizers: ['f2'] } },
        { apply: 'a', cfg: { labels: { x: '1' } } },
      ],
      finalizers: ['f2'],
      owners: { 'a/Apply': ['.metadata.labels.x'], 'b/Apply': ['.metadata.finalizers[="f2"]'] },
    },
    {
      name: 'an Update takes a changed field from the Apply manager',
      steps: [
        { apply: 'a', cfg: { labels: { x: '1', y: '1' } } },
        { update: 'kubectl-edit', cfg: { labels: { x: '2', y: '1' } } },
      ],
      labels: { x: '2', y: '1' },
      owners: { 'a/Apply': ['.metadata.labels.y'], 'kubectl-edit/Update': ['.metadata.labels.x'] },
    },
    {
      name: 'an Update removing a field takes it from its owner',
      steps: [
        { apply: 'a', cfg: { labels: { x: '1', y: '1' } } },
        { update: 'kubectl-edit', cfg: { labels: { y: '1' } } },
      ],
      labels: { y: '1' },
      owners: { 'a/Apply': ['.metadata.labels.y'] },
    },
    {
      name: 'an Update that changes nothing owns nothing',
      steps: [
        { apply: 'a', cfg: { labels: { x: '1' } } },
        { update: 'ctl', cfg: { labels: { x: '1' } } },
      ],
      labels: { x: '1' },
      owners: { 'a/Apply': ['.metadata.labels.x'] },
    },
  ] as Array<{
    name: string;
    steps: Step[];
    labels?: Record<string, string>;
    finalizers?: string[];
    containers?: string[];
    owners: Record<string, string[]>;
  }>)('$name', (tc) => {
    const o = run(tc.steps);
    if (tc.labels) expect(o.metadata.labels).toEqual(tc.labels);
    if (tc.finalizers) expect(o.metadata.finalizers).toEqual(tc.finalizers);
    if (tc.containers)
      expect(((o.spec as { containers?: Array<{ name: string }> })?.containers ?? []).map((x) => x.name)).toEqual(
        tc.containers,
      );
    expect(owners(o)).toEqual(tc.owners);
  });

  it.each([
    {
      name: 'a changed field of another applier',
      steps: [
        { apply: 'a', cfg: { labels: { x: '1' } } },
        { apply: 'b', cfg: { labels: { x: '2' } } },
      ],
      message: 'Apply failed with 1 conflict: conflict with "a": .metadata.labels.x',
      fields: ['.metadata.labels.x'],
    },
    {
      name: 'an atomic list is one field',
      steps: [
        { apply: 'a', cfg: { containers: [c('c', { args: ['x'] })] } },
        { apply: 'b', cfg: { containers: [c('c', { args: ['y'] })] } },
      ],
      message: 'Apply failed with 1 conflict: conflict with "a": .spec.containers[name="c"].args',
      fields: ['.spec.containers[name="c"].args'],
    },
    {
      name: 'fields of an Update manager, grouped per manager',
      steps: [
        { update: 'kubectl-edit', cfg: { labels: { x: '1', y: '1' } } },
        { apply: 'b', cfg: { labels: { x: '2', y: '2' } } },
      ],
      message: `Apply failed with 2 conflicts: conflicts with "kubectl-edit" using v1 at ${T1}:\n- .metadata.labels.x\n- .metadata.labels.y`,
      fields: ['.metadata.labels.x', '.metadata.labels.y'],
    },
  ] as Array<{ name: string; steps: Step[]; message: string; fields: string[] }>)('conflict: $name', (tc) => {
    let caught: unknown;
    try {
      run(tc.steps);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(ApiConflictError);
    const s = toStatus(caught);
    expect(s.code).toBe(409);
    expect(s.reason).toBe('Conflict');
    expect(s.message).toBe(tc.message);
    expect(s.details?.causes?.map((x) => x.field)).toEqual(tc.fields);
    expect(
      s.details?.causes?.every((x) => x.reason === 'FieldManagerConflict' && x.message.startsWith('conflict with ')),
    ).toBe(true);
  });

  it('kubectl switching from client-side apply takes the fields its last-applied configuration holds', () => {
    const lastApplied = JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', labels: { x: '1' } } });
    const live = run([{ update: 'kubectl-client-side-apply', cfg: { labels: { x: '1' } } }]);
    live.metadata.annotations = { [LAST_APPLIED_ANNOTATION]: lastApplied };
    const out = applyConfig(pods, {
      live,
      config: pod({ labels: { x: '2' } }),
      manager: 'kubectl',
      force: false,
      now: T1,
    });
    expect(out.metadata.labels).toEqual({ x: '2' });
    // The labels map itself stays with the client-side manager (kubectl migrates that entry itself).
    expect(owners(out)).toEqual({
      'kubectl/Apply': ['.metadata.labels.x'],
      'kubectl-client-side-apply/Update': ['.metadata.labels'],
    });
    expect(JSON.parse(out.metadata.annotations![LAST_APPLIED_ANNOTATION]!)).toEqual({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { labels: { x: '2' }, name: 'p' },
    });
    // Another manager gets no such pass.
    expect(() =>
      applyConfig(pods, { live, config: pod({ labels: { x: '2' } }), manager: 'other', force: false, now: T1 }),
    ).toThrow(ApiConflictError);
  });

  it('an apply that changes nothing keeps the entry and its time', () => {
    const first = applyConfig(pods, {
      live: undefined,
      config: pod({ labels: { x: '1' } }),
      manager: 'a',
      force: false,
      now: T0,
    });
    const again = applyConfig(pods, {
      live: first,
      config: pod({ labels: { x: '1' } }),
      manager: 'a',
      force: false,
      now: T1,
    });
    expect(again.metadata.managedFields).toEqual(first.metadata.managedFields);
  });

  it('refuses managedFields in an applied configuration', () => {
    const cfg = { ...pod({}), metadata: { name: 'p', managedFields: [] } };
    expect(() => applyConfig(pods, { live: undefined, config: cfg, manager: 'a', force: false, now: T0 })).toThrow(
      'metadata.managedFields must be nil',
    );
  });
});

describe('managedFields of Update operations', () => {
  const created = (): KubeObject => {
    const o: KubeObject = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', namespace: 'd', uid: 'u', labels: { app: 'x' } },
      spec: { containers: [{ name: 'c', image: 'i', ports: [{ containerPort: 80, protocol: 'TCP' }], resources: {} }] },
    };
    o.metadata.managedFields = updateManagedFields(pods, undefined, o, undefined, 'kubectl-create', T0);
    return o;
  };

  it('writes kube-apiserver’s fieldsV1 for a create (`.` only on nodes Go does not always serialize)', () => {
    expect(created().metadata.managedFields).toEqual([
      {
        manager: 'kubectl-create',
        operation: 'Update',
        apiVersion: 'v1',
        time: T0,
        fieldsType: 'FieldsV1',
        fieldsV1: {
          'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
          'f:spec': {
            'f:containers': {
              'k:{"name":"c"}': {
                '.': {},
                'f:image': {},
                'f:name': {},
                'f:ports': {
                  '.': {},
                  'k:{"containerPort":80,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {}, 'f:protocol': {} },
                },
                'f:resources': {},
              },
            },
          },
        },
      },
    ]);
  });

  it('an empty list in the request resets managedFields; none keeps the live ones', () => {
    const old = created();
    const next = structuredClone(old);
    next.metadata.labels = { app: 'y' };
    expect(updateManagedFields(pods, old, next, [], 'ctl', T1)?.map((e) => e.manager)).toEqual(['ctl']);
    expect(updateManagedFields(pods, old, next, undefined, 'ctl', T1)?.map((e) => e.manager)).toEqual([
      'kubectl-create',
      'ctl',
    ]);
  });

  it('status is not owned through the main resource, and /status writes own only status', () => {
    const old = created();
    const next = structuredClone(old);
    next.status = { phase: 'Running' };
    expect(updateManagedFields(pods, old, next, undefined, 'ctl', T1)?.map((e) => e.manager)).toEqual([
      'kubectl-create',
    ]);
    const status = fieldManagerScope({
      schema: schemaFor('', 'v1', 'Pod'),
      apiVersion: 'v1',
      hasStatus: true,
      subresource: 'status',
    });
    const mf = updateManagedFields(status, old, next, undefined, 'kubelet', T1)!;
    expect(mf[1]).toMatchObject({
      manager: 'kubelet',
      subresource: 'status',
      fieldsV1: { 'f:status': { 'f:phase': {} } },
    });
  });
});

describe('fieldsV1', () => {
  it.each([
    { 'f:metadata': { 'f:labels': { '.': {}, 'f:a': {} } } },
    {
      'f:spec': { 'f:containers': { 'k:{"name":"c"}': { '.': {}, 'f:args': {} } } },
      'f:metadata': { 'f:finalizers': { 'v:"x"': {} } },
    },
    { 'f:data': { 'f:a.b': {}, 'f:c': {} } },
  ])('round-trips %j', (doc) => {
    expect(FieldSet.fromFieldsV1(doc).toFieldsV1()).toEqual(doc);
  });

  it('prints paths as kube does', () => {
    expect(pathString(['f:spec', 'f:ports', 'k:{"port":80,"protocol":"TCP"}', 'f:name'])).toBe(
      '.spec.ports[port=80,protocol="TCP"].name',
    );
    expect(pathString(['f:metadata', 'f:finalizers', 'v:"a"'])).toBe('.metadata.finalizers[="a"]');
  });
});

describe('the Update manager cap', () => {
  it('merges the oldest Update entries into ancient-changes past ten', () => {
    let o: KubeObject = pod({});
    for (let i = 0; i < 12; i++) {
      const next = structuredClone(o);
      next.metadata.labels = { ...(o.metadata.labels ?? {}), [`l${i}`]: 'x' };
      const mf = updateManagedFields(
        pods,
        o,
        next,
        next.metadata.managedFields,
        `m${String(i).padStart(2, '0')}`,
        `2024-01-01T00:00:${String(i).padStart(2, '0')}Z`,
      );
      next.metadata.managedFields = mf;
      o = next;
    }
    const entries = o.metadata.managedFields as Array<{ manager: string; time: string }>;
    expect(entries.map((e) => e.manager)).toEqual([
      'ancient-changes',
      ...Array.from({ length: 9 }, (_, i) => `m${String(i + 3).padStart(2, '0')}`),
    ]);
    expect(entries[0]!.time).toBe('2024-01-01T00:00:02Z');
    expect(owners(o)['ancient-changes/Update']).toEqual([
      '.metadata.labels',
      '.metadata.labels.l0',
      '.metadata.labels.l1',
      '.metadata.labels.l2',
    ]);
  });
});

describe('merging lists', () => {
  it.each([
    {
      name: 'shared items in the config order, live-only items where structured-merge-diff puts them',
      live: ['a', 'b', 'c'],
      cfg: ['c', 'a', 'd'],
      want: ['b', 'c', 'a', 'd'],
    },
    { name: 'new items after the live ones', live: ['a'], cfg: ['b'], want: ['a', 'b'] },
    {
      name: 'a repeated live key the config does not name stays twice',
      live: ['a', 'x', 'x'],
      cfg: ['a'],
      want: ['a', 'x', 'x'],
    },
  ])('$name', ({ live, cfg, want }) => {
    const env = (names: string[]) => ({ containers: [c('c', { env: names.map((n) => ({ name: n, value: n })) })] });
    const base = { ...pod(env(live)), metadata: { name: 'p' } };
    const out = applyConfig(pods, { live: base, config: pod(env(cfg)), manager: 'a', force: true, now: T0 });
    const got = (out.spec as { containers: Array<{ env: Array<{ name: string }> }> }).containers[0]!.env.map(
      (e) => e.name,
    );
    expect(got).toEqual(want);
  });
});

describe('configurations structured-merge-diff cannot type', () => {
  it('reports list items with one key', () => {
    const cfg = pod({
      containers: [
        c('c', {
          env: [
            { name: 'A', value: '1' },
            { name: 'A', value: '2' },
          ],
        }),
        c('c'),
      ],
    });
    expect(duplicateEntries(cfg, pods.type)).toEqual([
      '.spec.containers[name="c"].env: duplicate entries for key [name="A"]',
      '.spec.containers: duplicate entries for key [name="c"]',
    ]);
  });
});

describe('atomic structs', () => {
  it('a label selector is one field, replaced whole', () => {
    const pdbs = fieldManagerScope({
      schema: schemaFor('policy', 'v1', 'PodDisruptionBudget'),
      apiVersion: 'policy/v1',
      hasStatus: true,
    });
    const cfg = (labels: Record<string, string>): KubeObject => ({
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'b' },
      spec: { selector: { matchLabels: labels } },
    });
    const first = applyConfig(pdbs, {
      live: undefined,
      config: cfg({ a: '1', b: '2' }),
      manager: 'a',
      force: false,
      now: T0,
    });
    expect(owners(first)).toEqual({ 'a/Apply': ['.spec.selector'] });
    const second = applyConfig(pdbs, { live: first, config: cfg({ a: '1' }), manager: 'a', force: false, now: T1 });
    expect((second.spec as { selector: unknown }).selector).toEqual({ matchLabels: { a: '1' } });
  });
});
