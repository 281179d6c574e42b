import type { Pod } from 'kubernetes-types/core/v1.js';
import { describe, expect, it } from 'vitest';
import type { MountedPod } from '../cache/actual-state.js';
import { csiSpec, pod as ref, vol } from '../fixtures.test-kit.js';
import { decidePod, HOST_PATHS_ANNOTATION } from './decide.js';

const NOW = '2026-01-01T00:00:00Z';
const pod = (
  o: { volumes?: string[]; deleting?: boolean; running?: boolean; annotation?: string; creating?: boolean } = {},
): Pod => ({
  metadata: {
    name: 'a',
    namespace: 'default',
    uid: 'uid-a',
    ...(o.deleting ? { deletionTimestamp: NOW } : {}),
    ...(o.annotation ? { annotations: { [HOST_PATHS_ANNOTATION]: o.annotation } } : {}),
  },
  spec: {
    containers: [{ name: 'c', image: 'busybox' }],
    volumes: (o.volumes ?? ['data']).map((name) => ({ name, emptyDir: {} })),
  },
  status: o.running
    ? {
        phase: 'Running',
        conditions: ['PodScheduled', 'Initialized', 'ContainersReady', 'Ready'].map((type) => ({
          type,
          status: 'True',
        })),
      }
    : {
        phase: 'Pending',
        ...(o.creating
          ? {
              conditions: [{ type: 'Initialized', status: 'True' }],
              containerStatuses: [
                {
                  name: 'c',
                  image: 'busybox',
                  imageID: '',
                  ready: false,
                  restartCount: 0,
                  state: { waiting: { reason: 'ContainerCreating' } },
                },
              ],
            }
          : {}),
      },
});
const m = (name: string, state: 'Mounted' | 'Uncertain' = 'Mounted'): MountedPod => ({
  volume: vol(name),
  pod: ref('a'),
  outerSpecName: name,
  spec: csiSpec(name),
  state,
  hostPath: `/h/${name}`,
  remountRequired: false,
  resizeRequired: false,
});

describe('decidePod', () => {
  it.each([
    { name: 'nothing mounted → ContainerCreating', p: pod(), mounted: [], desired: 1, want: 'creating' },
    {
      name: 'nothing mounted, created 1 s ago → not yet (most pods are Running sooner)',
      p: { ...pod(), metadata: { ...pod().metadata, creationTimestamp: '2025-12-31T23:59:59Z' } },
      mounted: [],
      desired: 1,
      want: 'none',
    },
    {
      name: 'nothing mounted, created 2 s ago → ContainerCreating',
      p: { ...pod(), metadata: { ...pod().metadata, creationTimestamp: '2025-12-31T23:59:58Z' } },
      mounted: [],
      desired: 1,
      want: 'creating',
    },
    {
      name: 'nothing mounted, already ContainerCreating → wait',
      p: pod({ creating: true }),
      mounted: [],
      desired: 1,
      want: 'none',
    },
    {
      name: 'uncertain → wait',
      p: pod({ creating: true }),
      mounted: [m('data', 'Uncertain')],
      desired: 1,
      want: 'none',
    },
    {
      name: 'one of two → wait',
      p: pod({ volumes: ['data', 'x'], creating: true }),
      mounted: [m('data')],
      desired: 2,
      want: 'none',
    },
    {
      name: 'running, a volume remounting → stays',
      p: pod({ running: true }),
      mounted: [m('data', 'Uncertain')],
      desired: 1,
      want: 'none',
    },
    { name: 'all mounted → running', p: pod(), mounted: [m('data')], desired: 1, want: 'running' },
    { name: 'no volumes → running', p: pod({ volumes: [] }), mounted: [], desired: 0, want: 'running' },
    {
      name: 'already running with annotation → none',
      p: pod({ running: true, annotation: '{"data":"/h/data"}' }),
      mounted: [m('data')],
      desired: 1,
      want: 'none',
    },
    { name: 'deleting with mounts → wait', p: pod({ deleting: true }), mounted: [m('data')], desired: 0, want: 'none' },
    { name: 'deleting, all torn down → delete', p: pod({ deleting: true }), mounted: [], desired: 0, want: 'delete' },
  ])('$name', ({ p, mounted, desired, want }) => {
    expect(decidePod(p, mounted, desired, NOW).kind).toBe(want);
  });

  it('a pod waiting for its volumes shows ContainerCreating (kubectl STATUS) and is not ready', () => {
    const a = decidePod(pod(), [], 1, NOW);
    expect(a).toMatchObject({
      kind: 'creating',
      status: {
        phase: 'Pending',
        containerStatuses: [{ name: 'c', ready: false, state: { waiting: { reason: 'ContainerCreating' } } }],
      },
    });
    if (a.kind !== 'creating') throw new Error('unreachable');
    expect(
      (a.status['conditions'] as Array<{ type: string; status: string }>).map((c) => `${c.type}=${c.status}`),
    ).toEqual(['PodScheduled=True', 'Initialized=True', 'ContainersReady=False', 'Ready=False']);
  });

  it('writes Running, the four conditions and the host paths', () => {
    const a = decidePod(pod(), [m('data')], 1, NOW);
    expect(a).toMatchObject({ kind: 'running', annotation: '{"data":"/h/data"}', status: { phase: 'Running' } });
    if (a.kind !== 'running') throw new Error('unreachable');
    expect(
      (a.status?.['conditions'] as Array<{ type: string; status: string }>).map((c) => `${c.type}=${c.status}`),
    ).toEqual(['PodScheduled=True', 'Initialized=True', 'ContainersReady=True', 'Ready=True']);
  });

  it("writes the node's address as hostIP and hostIPs, and rewrites a ready pod that lacks it", () => {
    expect(decidePod(pod(), [], 1, NOW, '10.0.0.7')).toMatchObject({
      kind: 'creating',
      status: { phase: 'Pending', hostIP: '10.0.0.7', hostIPs: [{ ip: '10.0.0.7' }] },
    });
    const a = decidePod(pod(), [m('data')], 1, NOW, '10.0.0.7');
    expect(a).toMatchObject({ kind: 'running', status: { hostIP: '10.0.0.7', hostIPs: [{ ip: '10.0.0.7' }] } });
    if (a.kind !== 'running') throw new Error('unreachable');
    const running: Pod = { ...pod({ annotation: a.annotation }), status: a.status as Pod['status'] };
    expect(decidePod(running, [m('data')], 1, NOW, '10.0.0.7').kind).toBe('none');
    expect(decidePod(running, [m('data')], 1, NOW, '10.0.0.8')).toMatchObject({
      kind: 'running',
      status: { hostIP: '10.0.0.8' },
    });
  });
});
