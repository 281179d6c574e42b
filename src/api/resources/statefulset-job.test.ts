import { describe, expect, it } from 'vitest';
import { ctx, NOW, obj, texts } from './core.test-kit.js';
import { statefulSetResource as sts } from './statefulset.js';
import { jobResource as job, completionsCell, jobStatusCell } from './job.js';
import { controllerRevisionResource as cr } from './controllerrevision.js';
import type { KubeObject } from './types.js';

const template = (labels: Record<string, string> = { app: 'web' }, spec: Record<string, unknown> = {}) => ({
  metadata: { labels },
  spec: { containers: [{ name: 'c', image: 'img', volumeMounts: [{ name: 'www', mountPath: '/data' }] }], ...spec },
});

function mkSet(spec: Record<string, unknown> = {}): KubeObject {
  return obj(
    'StatefulSet',
    'web',
    {
      spec: {
        serviceName: 'nginx',
        replicas: 3,
        selector: { matchLabels: { app: 'web' } },
        template: template(),
        volumeClaimTemplates: [
          {
            metadata: { name: 'www' },
            spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
          },
        ],
        ...spec,
      },
    },
    'default',
  );
}

/** Create as the registry does: prepare (defaults), then validate. */
function created(def: typeof sts, o: KubeObject): { o: KubeObject; causes: string[] } {
  def.prepareForCreate(o, ctx());
  return { o, causes: texts(def.validateCreate(o, ctx())) };
}

describe('StatefulSet', () => {
  it('is served as kubectl expects: sts, in all, with status', () => {
    expect(sts).toMatchObject({
      group: 'apps',
      version: 'v1',
      plural: 'statefulsets',
      shortNames: ['sts'],
      categories: ['all'],
      hasStatus: true,
    });
    expect(sts.columns.filter((c) => c.priority === 0).map((c) => c.name)).toEqual(['Name', 'Ready', 'Age']);
  });

  it('defaults as apps/v1: OrderedReady, RollingUpdate partition 0, history 10, Retain/Retain, claim templates as claims', () => {
    const { o, causes } = created(sts, mkSet({ replicas: undefined }));
    expect(causes).toEqual([]);
    expect(o.spec).toMatchObject({
      replicas: 1,
      podManagementPolicy: 'OrderedReady',
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 0 } },
      revisionHistoryLimit: 10,
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: 'Retain' },
      volumeClaimTemplates: [
        {
          apiVersion: 'v1',
          kind: 'PersistentVolumeClaim',
          spec: { volumeMode: 'Filesystem' },
          status: { phase: 'Pending' },
        },
      ],
      template: { spec: { restartPolicy: 'Always', dnsPolicy: 'ClusterFirst' } },
    });
    expect(o.metadata.labels).toEqual({ app: 'web' });
  });

  it.each([
    ['selector missing', { selector: undefined }, ['spec.selector: Required value']],
    [
      'selector not matching the template',
      { selector: { matchLabels: { app: 'db' } } },
      [
        'spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: `selector` does not match template `labels`',
      ],
    ],
    [
      'restartPolicy other than Always',
      { template: template({ app: 'web' }, { restartPolicy: 'Never' }) },
      ['spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"'],
    ],
    [
      'bad pod management policy',
      { podManagementPolicy: 'Sometimes' },
      ["spec.podManagementPolicy: Invalid value: \"Sometimes\": must be 'OrderedReady' or 'Parallel'"],
    ],
    [
      'bad retention policy',
      { persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Keep', whenScaled: 'Retain' } },
      [
        'spec.persistentVolumeClaimRetentionPolicy.whenDeleted: Unsupported value: "Keep": supported values: "Retain", "Delete"',
      ],
    ],
    ['negative replicas', { replicas: -1 }, ['spec.replicas: Invalid value: -1: must be greater than or equal to 0']],
    ['not the pod spec, as kube (its pods would fail to be created)', { volumeClaimTemplates: [] }, []],
    ['nor a template pod spec without containers', { template: template({ app: 'web' }, { containers: [] }) }, []],
    [
      'empty selector',
      { selector: {} },
      [
        'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for statefulset',
      ],
    ],
    [
      'template labels validated at spec.template.labels, as upstream',
      { selector: { matchLabels: { 'a b': 'x' } }, template: template({ 'a b': 'x' }) },
      expect.arrayContaining([expect.stringMatching(/^spec\.template\.labels: Invalid value: "a b"/)]),
    ],
    [
      'template activeDeadlineSeconds',
      { template: template({ app: 'web' }, { activeDeadlineSeconds: 5 }) },
      ['spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in StatefulSet is not Supported'],
    ],
  ])('validation: %s', (_n, spec, want) => {
    expect(created(sts, mkSet(spec)).causes).toEqual(want);
  });

  it('only replicas, template, updateStrategy, retention policy, minReadySeconds and ordinals may change', () => {
    const old = created(sts, mkSet()).o;
    const ok = structuredClone(old);
    Object.assign(ok.spec as object, {
      replicas: 5,
      minReadySeconds: 3,
      updateStrategy: { type: 'OnDelete' },
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Delete' },
    });
    sts.prepareForUpdate(ok, old, ctx());
    expect(sts.validateUpdate(ok, old, ctx())).toEqual([]);
    const bad = structuredClone(old);
    (bad.spec as { serviceName: string }).serviceName = 'other';
    sts.prepareForUpdate(bad, old, ctx());
    expect(texts(sts.validateUpdate(bad, old, ctx()))).toEqual([
      "spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
    ]);
  });

  it('prints READY as ready/desired', () => {
    const o = created(sts, mkSet()).o;
    o.status = { replicas: 3, readyReplicas: 2 };
    expect(sts.row(o, NOW).slice(0, 3)).toEqual(['web', '2/3', '5m']);
  });
});

function mkJob(spec: Record<string, unknown> = {}): KubeObject {
  return obj(
    'Job',
    'pi',
    { spec: { template: { spec: { containers: [{ name: 'pi', image: 'perl' }], restartPolicy: 'Never' } }, ...spec } },
    'default',
  );
}

describe('Job', () => {
  it('defaults completions, parallelism, backoffLimit, completionMode and generates its selector from its uid', () => {
    const { o, causes } = created(job, mkJob());
    expect(causes).toEqual([]);
    const uid = o.metadata.uid;
    expect(o.spec).toMatchObject({
      completions: 1,
      parallelism: 1,
      backoffLimit: 6,
      completionMode: 'NonIndexed',
      suspend: false,
      selector: { matchLabels: { 'batch.kubernetes.io/controller-uid': uid } },
      template: {
        metadata: {
          labels: {
            'batch.kubernetes.io/controller-uid': uid,
            'controller-uid': uid,
            'batch.kubernetes.io/job-name': 'pi',
            'job-name': 'pi',
          },
        },
      },
    });
    expect(o.metadata.labels).toMatchObject({ 'job-name': 'pi' });
  });

  it('a work queue (parallelism only) keeps completions unset', () => {
    const { o } = created(job, mkJob({ parallelism: 3 }));
    expect(o.spec).toMatchObject({ parallelism: 3 });
    expect((o.spec as Record<string, unknown>).completions).toBeUndefined();
    expect(completionsCell(o)).toBe('0/1 of 3');
  });

  it.each([
    [
      'restartPolicy Always',
      { template: { spec: { containers: [{ name: 'c', image: 'i' }], restartPolicy: 'Always' } } },
      ['spec.template.spec.restartPolicy: Unsupported value: "Always": supported values: "OnFailure", "Never"'],
    ],
    [
      'template activeDeadlineSeconds is allowed',
      {
        template: {
          spec: { containers: [{ name: 'c', image: 'i' }], restartPolicy: 'Never', activeDeadlineSeconds: 5 },
        },
      },
      [],
    ],
    [
      'negative backoffLimit',
      { backoffLimit: -1 },
      ['spec.backoffLimit: Invalid value: -1: must be greater than or equal to 0'],
    ],
    [
      'podFailurePolicy with OnFailure',
      {
        podFailurePolicy: { rules: [] },
        template: { spec: { containers: [{ name: 'c', image: 'i' }], restartPolicy: 'OnFailure' } },
      },
      ['spec.template.spec.restartPolicy: Unsupported value: "OnFailure": supported values: "Never"'],
    ],
    [
      'Indexed without completions',
      { completionMode: 'Indexed', completions: null, parallelism: 2 },
      ['spec.completions: Required value: when completion mode is Indexed'],
    ],
  ])('validation: %s', (_n, spec, want) => {
    expect(created(job, mkJob(spec)).causes).toEqual(want);
  });

  it('an Indexed Job whose highest pod hostname would be no DNS label is refused', () => {
    const name = 'j'.repeat(62);
    const o = obj(
      'Job',
      name,
      {
        spec: {
          completionMode: 'Indexed',
          completions: 11,
          template: { spec: { containers: [{ name: 'c', image: 'i' }], restartPolicy: 'Never' } },
        },
      },
      'default',
    );
    expect(created(job, o).causes).toEqual([
      `metadata.name: Invalid value: "${name}": will not able to create pod with invalid DNS label: ${name}-10`,
    ]);
  });

  it('manualSelector keeps the user selector, which must match the template', () => {
    const { o, causes } = created(
      job,
      mkJob({
        manualSelector: true,
        selector: { matchLabels: { a: 'b' } },
        template: {
          metadata: { labels: { a: 'b' } },
          spec: { containers: [{ name: 'c', image: 'i' }], restartPolicy: 'OnFailure' },
        },
      }),
    );
    expect(causes).toEqual([]);
    expect((o.spec as Record<string, unknown>).selector).toEqual({ matchLabels: { a: 'b' } });
  });

  it('template and completions are immutable; parallelism is not', () => {
    const old = created(job, mkJob()).o;
    const scaled = structuredClone(old);
    (scaled.spec as Record<string, unknown>).parallelism = 4;
    expect(job.validateUpdate(scaled, old, ctx())).toEqual([]);
    const changed = structuredClone(old);
    (changed.spec as Record<string, unknown>).completions = 4;
    expect(texts(job.validateUpdate(changed, old, ctx()))).toEqual([
      'spec.completions: Invalid value: 4: field is immutable',
    ]);
  });

  it("completions change with parallelism in an elastic Indexed Job; a suspended Job that never ran may change its pods' scheduling", () => {
    const old = created(job, mkJob({ completionMode: 'Indexed', completions: 2, parallelism: 2, suspend: true })).o;
    const elastic = structuredClone(old);
    Object.assign(elastic.spec as object, { completions: 4, parallelism: 4 });
    expect(job.validateUpdate(elastic, old, ctx())).toEqual([]);
    const placed = structuredClone(old);
    (placed.spec as { template: { spec: Record<string, unknown> } }).template.spec.nodeSelector = { zone: 'a' };
    expect(job.validateUpdate(placed, old, ctx())).toEqual([]);
    const started = { ...structuredClone(old), status: { startTime: '2024-05-01T11:00:00Z' } };
    expect(texts(job.validateUpdate({ ...placed, status: started.status }, started, ctx()))).toEqual([
      'spec.template: Invalid value: {...}: field is immutable',
    ]);
  });

  it('prints STATUS, COMPLETIONS and DURATION as kubectl 1.30', () => {
    const o = created(job, mkJob({ completions: 3 })).o;
    expect(job.columns.filter((c) => c.priority === 0).map((c) => c.name)).toEqual([
      'Name',
      'Status',
      'Completions',
      'Duration',
      'Age',
    ]);
    o.status = { succeeded: 1, startTime: '2024-05-01T11:58:00Z' };
    expect(job.row(o, NOW).slice(0, 5)).toEqual(['pi', 'Running', '1/3', '2m', '5m']);
    o.status = {
      succeeded: 3,
      startTime: '2024-05-01T11:58:00Z',
      completionTime: '2024-05-01T11:58:30Z',
      conditions: [{ type: 'Complete', status: 'True' }],
    };
    expect(job.row(o, NOW).slice(0, 5)).toEqual(['pi', 'Complete', '3/3', '30s', '5m']);
    expect(jobStatusCell({ ...o, status: { conditions: [{ type: 'Failed', status: 'True' }] } })).toBe('Failed');
  });
});

describe('ControllerRevision', () => {
  const rev = (data: unknown) => obj('ControllerRevision', 'web-abc', { data, revision: 2 }, 'default');

  it('prints CONTROLLER as kind.group/name and REVISION', () => {
    const o = rev({ spec: {} });
    o.metadata.ownerReferences = [
      { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', uid: 'u', controller: true },
    ];
    expect(cr.row(o, NOW)).toEqual(['web-abc', 'statefulset.apps/web', 2, '5m']);
    expect(cr.row(rev({}), NOW)[1]).toBe('<none>');
  });

  it('data is required and immutable', () => {
    expect(texts(cr.validateCreate(rev(undefined), ctx()))).toEqual(['data: Required value']);
    expect(texts(cr.validateUpdate(rev({ a: 2 }), rev({ a: 1 }), ctx()))).toEqual([
      'data: Invalid value: runtime.RawExtension{...}: field is immutable',
    ]);
  });
});
