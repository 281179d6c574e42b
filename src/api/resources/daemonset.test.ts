import { describe, expect, it } from 'vitest';
import { ctx, NOW, obj, texts } from './core.test-kit.js';
import { daemonSetResource as ds, TEMPLATE_GENERATION_ANNOTATION } from './daemonset.js';
import type { KubeObject } from './types.js';

function mkSet(spec: Record<string, unknown> = {}): KubeObject {
  return obj(
    'DaemonSet',
    'agent',
    {
      spec: {
        selector: { matchLabels: { app: 'agent' } },
        template: { metadata: { labels: { app: 'agent' } }, spec: { containers: [{ name: 'c', image: 'img' }] } },
        ...spec,
      },
    },
    'default',
  );
}

function created(o: KubeObject): { o: KubeObject; causes: string[] } {
  ds.prepareForCreate(o, ctx());
  return { o, causes: texts(ds.validateCreate(o, ctx())) };
}

describe('DaemonSet', () => {
  it('is served as kubectl expects: ds, in all, with status and kube’s columns', () => {
    expect(ds).toMatchObject({ group: 'apps', plural: 'daemonsets', shortNames: ['ds'], categories: ['all'] });
    expect(ds.columns.filter((c) => c.priority === 0).map((c) => c.name)).toEqual([
      'Name',
      'Desired',
      'Current',
      'Ready',
      'Up-to-date',
      'Available',
      'Node Selector',
      'Age',
    ]);
    const o = mkSet();
    (o.spec as Record<string, unknown>).template = {
      metadata: {},
      spec: { nodeSelector: { zone: 'a', disk: 'ssd' }, containers: [] },
    };
    o.status = { desiredNumberScheduled: 2, currentNumberScheduled: 2, numberReady: 1 };
    const row = ds.row(o, NOW);
    expect(row.slice(1, 7)).toEqual([2, 2, 1, 0, 0, 'disk=ssd,zone=a']);
  });

  it('defaults as apps/v1: RollingUpdate maxUnavailable 1 maxSurge 0, history 10, template generation 1', () => {
    const { o, causes } = created(mkSet());
    expect(causes).toEqual([]);
    expect(o.spec).toMatchObject({
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } },
      revisionHistoryLimit: 10,
    });
    expect(o.metadata.annotations?.[TEMPLATE_GENERATION_ANNOTATION]).toBe('1');
    expect(o.metadata.generation).toBe(1);
  });

  it('raises the template generation only when the template changes', () => {
    const { o: old } = created(mkSet());
    const same = structuredClone(old);
    same.metadata.annotations = {};
    ds.prepareForUpdate(same, old, ctx());
    expect(same.metadata.annotations?.[TEMPLATE_GENERATION_ANNOTATION]).toBe('1');
    const changed = structuredClone(old);
    (changed.spec as { template: { spec: { containers: { image: string }[] } } }).template.spec.containers[0]!.image =
      'img:2';
    ds.prepareForUpdate(changed, old, ctx());
    expect(changed.metadata.annotations?.[TEMPLATE_GENERATION_ANNOTATION]).toBe('2');
  });

  it('refuses what kube refuses, with its messages', () => {
    const surgeAndUnavailable = created(
      mkSet({ updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 1 } } }),
    );
    expect(surgeAndUnavailable.causes).toEqual([
      'spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: 1: may not be set when maxUnavailable is non-zero',
    ]);
    const neither = created(
      mkSet({ updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: '0%' } } }),
    );
    expect(neither.causes).toEqual([
      'spec.updateStrategy.rollingUpdate.maxUnavailable: Required value: cannot be 0 when maxSurge is 0',
    ]);
    const bad = created(mkSet({ updateStrategy: { type: 'Sometimes' } }));
    expect(bad.causes).toEqual([
      'spec.updateStrategy: Unsupported value: "Sometimes": supported values: "RollingUpdate", "OnDelete"',
    ]);
    const empty = created(mkSet({ selector: {} }));
    expect(empty.causes.some((c) => c.includes('empty selector is invalid for daemonset'))).toBe(true);
    const never = created(
      mkSet({
        template: {
          metadata: { labels: { app: 'agent' } },
          spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'img' }] },
        },
      }),
    );
    expect(never.causes.some((c) => c.startsWith('spec.template.spec.restartPolicy: Unsupported value'))).toBe(true);
  });

  it('keeps the selector immutable and validates status counts', () => {
    const { o: old } = created(mkSet());
    const moved = structuredClone(old);
    (moved.spec as Record<string, unknown>).selector = { matchLabels: { app: 'other' } };
    (moved.spec as { template: { metadata: { labels: Record<string, string> } } }).template.metadata.labels = {
      app: 'other',
    };
    expect(texts(ds.validateUpdate(moved, old, ctx())).some((c) => c.includes('field is immutable'))).toBe(true);
    const st = structuredClone(old);
    st.status = { numberReady: -1 };
    expect(texts(ds.validateStatusUpdate(st, old, ctx()))).toEqual([
      'status.numberReady: Invalid value: -1: must be greater than or equal to 0',
    ]);
  });
});
