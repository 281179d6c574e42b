import type { Deployment, ReplicaSet } from 'kubernetes-types/apps/v1.js';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { describe, expect, it } from 'vitest';
import {
  findNewReplicaSet,
  historyToDelete,
  newReplicaSetFor,
  planDeployment,
  scaleDownOldReplicaSets,
  type DeploymentAction,
} from './decide.js';
import { fenceposts, POD_TEMPLATE_HASH_LABEL, REVISION_ANNOTATION, templateHash } from './util.js';

const NOW = Date.parse('2026-01-01T00:10:00Z');
const template = (image: string) => ({
  metadata: { labels: { app: 'web' } },
  spec: { containers: [{ name: 'c', image }] },
});

function deployment(
  o: {
    replicas?: number;
    image?: string;
    strategy?: 'Recreate' | 'RollingUpdate';
    surge?: number | string;
    unavailable?: number | string;
    paused?: boolean;
    history?: number;
  } = {},
): Deployment {
  const strategy = o.strategy ?? 'RollingUpdate';
  return {
    metadata: { name: 'web', namespace: 'ns', uid: 'd-uid', generation: 1 },
    spec: {
      replicas: o.replicas ?? 3,
      selector: { matchLabels: { app: 'web' } },
      template: template(o.image ?? 'v2'),
      strategy:
        strategy === 'Recreate'
          ? { type: 'Recreate' }
          : {
              type: 'RollingUpdate',
              rollingUpdate: { maxSurge: o.surge ?? '25%', maxUnavailable: o.unavailable ?? '25%' },
            },
      revisionHistoryLimit: o.history ?? 10,
      progressDeadlineSeconds: 600,
      ...(o.paused ? { paused: true } : {}),
    },
  };
}

/** A ReplicaSet of `image` with `spec` replicas, `available` of them available (all observed). */
function rs(image: string, spec: number, available = spec, revision = 1, created = '2026-01-01T00:00:00Z'): ReplicaSet {
  const d = deployment({ image, replicas: spec });
  const r = newReplicaSetFor(d, spec, revision);
  return {
    ...r,
    metadata: {
      ...r.metadata,
      uid: `uid-${image}`,
      creationTimestamp: created,
      annotations: { [REVISION_ANNOTATION]: String(revision) },
    },
    status: { replicas: spec, readyReplicas: available, availableReplicas: available },
  };
}

/** Replica changes (annotation-only updates left out) by image; `new:` marks a created ReplicaSet. */
const sizes = (actions: readonly DeploymentAction[]): Record<string, number> =>
  Object.fromEntries(
    actions.flatMap((a) =>
      a.kind === 'update' && a.replicas !== a.rs.spec!.replicas
        ? [[a.rs.spec!.template!.spec!.containers[0]!.image!, a.replicas]]
        : a.kind === 'create'
          ? [[`new:${a.rs.spec!.template!.spec!.containers[0]!.image!}`, a.rs.spec!.replicas!]]
          : [],
    ),
  );

const plan = (d: Deployment, rss: ReplicaSet[], pods: Record<string, Pod[]> = {}) =>
  planDeployment({
    d,
    replicaSets: rss,
    podsOf: (r) => pods[r.metadata!.uid!] ?? [],
    nowMs: NOW,
    nowIso: '2026-01-01T00:10:00Z',
  });

describe('fenceposts (ResolveFenceposts)', () => {
  it.each([
    { replicas: 3, surge: '25%', unavailable: '25%', want: { surge: 1, unavailable: 0 } },
    { replicas: 10, surge: '25%', unavailable: '25%', want: { surge: 3, unavailable: 2 } },
    { replicas: 4, surge: 0, unavailable: 0, want: { surge: 0, unavailable: 1 } },
    { replicas: 5, surge: 2, unavailable: '50%', want: { surge: 2, unavailable: 2 } },
  ])('$replicas replicas, surge $surge, unavailable $unavailable', ({ replicas, surge, unavailable, want }) => {
    expect(fenceposts(deployment({ replicas, surge, unavailable }))).toEqual(want);
  });
});

describe('a RollingUpdate step', () => {
  it.each([
    { name: 'no ReplicaSet yet: the new one at full size', d: deployment(), rss: [], want: { 'new:v2': 3 } },
    {
      name: 'new template: new ReplicaSet of maxSurge (1 of 3)',
      d: deployment(),
      rss: [rs('v1', 3)],
      want: { 'new:v2': 1 },
    },
    {
      name: 'surge pod not available: nothing scaled down (maxUnavailable 0)',
      d: deployment(),
      rss: [rs('v1', 3), rs('v2', 1, 0, 2, '2026-01-01T00:05:00Z')],
      want: {},
    },
    {
      name: 'surge pod available: one old replica goes',
      d: deployment(),
      rss: [rs('v1', 3), rs('v2', 1, 1, 2, '2026-01-01T00:05:00Z')],
      want: { v1: 2 },
    },
    {
      name: 'room again: new grows by one',
      d: deployment(),
      rss: [rs('v1', 2), rs('v2', 1, 1, 2, '2026-01-01T00:05:00Z')],
      want: { v2: 2 },
    },
    {
      name: 'maxUnavailable 1, maxSurge 0: old shrinks first',
      d: deployment({ surge: 0, unavailable: 1 }),
      rss: [rs('v1', 3)],
      want: { 'new:v2': 0 },
    },
    {
      name: 'maxUnavailable 1, maxSurge 0, new exists: one old goes',
      d: deployment({ surge: 0, unavailable: 1 }),
      rss: [rs('v1', 3), rs('v2', 0, 0, 2, '2026-01-01T00:05:00Z')],
      want: { v1: 2 },
    },
    {
      name: 'unhealthy old replicas are cleaned up first',
      d: deployment({ replicas: 4, surge: 1, unavailable: 1 }),
      rss: [rs('v1', 4, 2), rs('v2', 1, 1, 2, '2026-01-01T00:05:00Z')],
      want: { v1: 2 },
    },
  ])('$name', ({ d, rss, want }) => {
    expect(sizes(plan(d, rss).actions)).toEqual(want);
  });

  it('names the new ReplicaSet <deployment>-<pod-template-hash> and labels its template and selector', () => {
    const d = deployment();
    const [a] = plan(d, [rs('v1', 3)]).actions;
    const hash = templateHash(d.spec!.template);
    expect(a).toMatchObject({
      kind: 'create',
      rs: {
        metadata: { name: `web-${hash}`, annotations: { [REVISION_ANNOTATION]: '2' } },
        spec: {
          selector: { matchLabels: { app: 'web', [POD_TEMPLATE_HASH_LABEL]: hash } },
          template: { metadata: { labels: { [POD_TEMPLATE_HASH_LABEL]: hash } } },
        },
      },
    });
    expect(a!.kind === 'create' && a!.rs.metadata!.ownerReferences).toEqual([
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        name: 'web',
        uid: 'd-uid',
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    expect(hash).toMatch(/^[bcdfghjklmnpqrstvwxz2456789]+$/);
  });

  it('finds the new ReplicaSet by template, whatever its hash label', () => {
    const old = rs('v1', 3);
    const cur = rs('v2', 3, 3, 2);
    expect(findNewReplicaSet(deployment(), [old, cur])).toBe(cur);
    expect(findNewReplicaSet(deployment({ image: 'v3' }), [old, cur])).toBeUndefined();
  });

  it('a rollback to an old template gives its ReplicaSet the next revision', () => {
    const p = plan(deployment({ image: 'v1' }), [rs('v1', 0, 0, 1), rs('v2', 3, 3, 2, '2026-01-01T00:05:00Z')]);
    expect(p.revision).toBe('3');
    const up = p.actions.find((a) => a.kind === 'update' && a.rs.spec!.template!.spec!.containers[0]!.image === 'v1');
    expect(up).toMatchObject({
      replicas: 1,
      annotations: { [REVISION_ANNOTATION]: '3', 'deployment.kubernetes.io/revision-history': '1' },
    });
  });

  it('scaleDownOldReplicaSets never takes availability below replicas - maxUnavailable', () => {
    const d = deployment({ replicas: 10 }); // maxUnavailable 2
    const downs = scaleDownOldReplicaSets(d, rs('v2', 3, 3, 2), [rs('v1', 10, 10)]);
    expect(downs.get(`web-${templateHash(template('v1'))}`)).toBe(5); // 13 available, 8 must stay
  });
});

describe('a Recreate step', () => {
  const runningPod = (phase = 'Running', deleting = false): Pod => ({
    metadata: { name: 'p', ...(deleting ? { deletionTimestamp: '2026-01-01T00:09:00Z' } : {}) },
    status: { phase },
  });
  it.each([
    {
      name: 'old ReplicaSet scaled to 0 first, no new one yet',
      rss: [rs('v1', 3)],
      pods: {} as Record<string, Pod[]>,
      want: { v1: 0 },
    },
    {
      name: 'old pods still terminating: wait',
      rss: [rs('v1', 0, 0)],
      pods: { 'uid-v1': [runningPod('Running', true)] },
      want: {},
    },
    {
      name: 'old pods gone: new ReplicaSet at full size',
      rss: [rs('v1', 0, 0)],
      pods: { 'uid-v1': [runningPod('Succeeded')] },
      want: { 'new:v2': 3 },
    },
  ])('$name', ({ rss, pods, want }) => {
    expect(sizes(plan(deployment({ strategy: 'Recreate' }), rss, pods).actions)).toEqual(want);
  });
});

describe('scaling and history', () => {
  it('a scaling event resizes the only active ReplicaSet', () => {
    const cur = rs('v2', 3, 3, 1);
    cur.metadata!.annotations!['deployment.kubernetes.io/desired-replicas'] = '3';
    expect(sizes(plan(deployment({ replicas: 5 }), [cur]).actions)).toEqual({ v2: 5 });
  });

  it('a paused Deployment does not roll but still scales', () => {
    const p = plan(deployment({ paused: true, image: 'v3' }), [rs('v2', 3, 3, 1)]);
    expect(sizes(p.actions)).toEqual({});
    expect(p.status.conditions?.find((c) => c.type === 'Progressing')).toMatchObject({
      status: 'Unknown',
      reason: 'DeploymentPaused',
      message: 'Deployment is paused',
    });
  });

  it('keeps revisionHistoryLimit old ReplicaSets without replicas, deleting the oldest revisions', () => {
    const old = [1, 2, 3, 4].map((r) => rs(`v0${r}`, 0, 0, r));
    expect(
      historyToDelete(deployment({ history: 2 }), old).map((r) => r.spec!.template!.spec!.containers[0]!.image),
    ).toEqual(['v01', 'v02']);
  });

  it('a complete rollout: Available and Progressing NewReplicaSetAvailable', () => {
    const p = plan(deployment(), [rs('v2', 3, 3, 1)]);
    expect(p.status).toMatchObject({
      observedGeneration: 1,
      replicas: 3,
      updatedReplicas: 3,
      readyReplicas: 3,
      availableReplicas: 3,
    });
    const reasons = Object.fromEntries((p.status.conditions ?? []).map((c) => [c.type, c.reason]));
    expect(reasons).toEqual({ Available: 'MinimumReplicasAvailable', Progressing: 'FoundNewReplicaSet' });
    const again = plan({ ...deployment(), status: p.status }, [rs('v2', 3, 3, 1)]);
    expect(again.status.conditions?.find((c) => c.type === 'Progressing')).toMatchObject({
      reason: 'NewReplicaSetAvailable',
      message: `ReplicaSet "web-${templateHash(template('v2'))}" has successfully progressed.`,
    });
  });

  it('no progress past the deadline: ProgressDeadlineExceeded', () => {
    const d: Deployment = {
      ...deployment(),
      status: {
        replicas: 4,
        updatedReplicas: 1,
        readyReplicas: 3,
        availableReplicas: 3,
        conditions: [
          {
            type: 'Progressing',
            status: 'True',
            reason: 'ReplicaSetUpdated',
            lastUpdateTime: '2025-12-31T23:59:00Z',
            lastTransitionTime: '2025-12-31T23:59:00Z',
          },
        ],
      },
    };
    const p = plan(d, [rs('v1', 3), rs('v2', 1, 0, 2, '2026-01-01T00:05:00Z')]);
    expect(p.status.conditions?.find((c) => c.type === 'Progressing')).toMatchObject({
      status: 'False',
      reason: 'ProgressDeadlineExceeded',
    });
  });
});
