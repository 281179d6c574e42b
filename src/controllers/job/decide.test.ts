import { describe, expect, it } from 'vitest';
import type { Job } from 'kubernetes-types/batch/v1.js';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { decideJob, newJobPod, type JobAction } from './decide.js';
import { decideTtl } from '../ttlafterfinished/decide.js';
import { JOB_TRACKING_FINALIZER } from '../../kube/workloads.js';

const NOW = Date.parse('2024-05-01T12:00:00Z');
const NOW_ISO = '2024-05-01T12:00:00Z';
const START = '2024-05-01T11:59:00Z';

function job(spec: Partial<NonNullable<Job['spec']>> = {}, status: Job['status'] = { startTime: START }): Job {
  return {
    metadata: { name: 'pi', namespace: 'ns', uid: 'job-uid' },
    spec: {
      completions: 1,
      parallelism: 1,
      backoffLimit: 6,
      podReplacementPolicy: 'TerminatingOrFailed',
      template: { spec: { containers: [{ name: 'c', image: 'i' }], restartPolicy: 'Never' } },
      ...spec,
    },
    status,
  };
}

type PodState = 'running' | 'ready' | 'succeeded' | 'failed' | 'deleted';

/** A pod `name` (uid = name) in `state`; `tracked` = still holds the job-tracking finalizer. */
function pod(name: string, state: PodState, tracked = true, restarts = 0): Pod {
  const phase = state === 'succeeded' ? 'Succeeded' : state === 'failed' ? 'Failed' : 'Running';
  return {
    metadata: {
      name,
      uid: name,
      creationTimestamp: '2024-05-01T11:59:00Z',
      ...(tracked ? { finalizers: [JOB_TRACKING_FINALIZER] } : {}),
      ...(state === 'deleted' ? { deletionTimestamp: '2024-05-01T11:59:30Z' } : {}),
    },
    spec: { nodeName: 'n1', containers: [] },
    status: {
      phase,
      conditions: [{ type: 'Ready', status: state === 'ready' ? 'True' : 'False' }],
      containerStatuses: [{ name: 'c', image: 'i', imageID: '', ready: state === 'ready', restartCount: restarts }],
    },
  };
}

/** A counted failed pod whose container finished at `at`. */
function failedAt(name: string, at: string): Pod {
  const p = pod(name, 'failed', false);
  return {
    ...p,
    status: {
      ...p.status,
      containerStatuses: [
        {
          name: 'c',
          image: 'i',
          imageID: '',
          ready: false,
          restartCount: 0,
          state: { terminated: { exitCode: 1, finishedAt: at } },
        },
      ],
    },
  };
}

function summary(actions: readonly JobAction[]): string[] {
  return actions.map((a) => {
    switch (a.kind) {
      case 'createPods':
        return `create ${a.count}`;
      case 'deletePods':
        return `delete ${a.pods.map((p) => p.metadata?.name).join(',')}`;
      case 'removeFinalizers':
        return `release ${a.pods.map((p) => p.metadata?.name).join(',')}`;
      case 'event':
        return `event ${a.reason}`;
    }
  });
}

const decide = (j: Job, pods: Pod[]) =>
  decideJob({ job: j, pods, now: NOW, nowIso: NOW_ISO, backoff: { initialMs: 10_000, maxMs: 360_000 } });
const conditionTypes = (j: ReturnType<typeof decide>) =>
  (j.status.conditions ?? [])
    .filter((c) => c.status === 'True')
    .map((c) => `${c.type}${c.reason ? `:${c.reason}` : ''}`);

describe('decideJob: pods to create and delete', () => {
  it.each([
    { name: 'a new Job creates its first pod and starts', j: job({}, {}), pods: [], want: ['create 1'], active: 1 },
    {
      name: 'parallelism 3 of completions 5: three at a time',
      j: job({ completions: 5, parallelism: 3 }),
      pods: [],
      want: ['create 3'],
      active: 3,
    },
    {
      name: 'no more pods than completions left',
      j: job({ completions: 5, parallelism: 3 }, { startTime: START, succeeded: 4 }),
      pods: [pod('a', 'running')],
      want: [],
      active: 1,
    },
    {
      name: 'parallelism lowered: the surplus, not-ready first',
      j: job({ completions: 5, parallelism: 1 }),
      pods: [pod('a', 'ready'), pod('b', 'running')],
      want: ['delete b'],
      active: 1,
    },
    {
      name: 'a work queue (no completions) stops creating once one succeeded',
      j: job({ completions: undefined, parallelism: 2 }, { startTime: START, succeeded: 1 }),
      pods: [pod('a', 'running')],
      want: [],
      active: 1,
    },
    {
      name: 'a terminating pod is replaced only once gone (TerminatingOrFailed)',
      j: job(),
      pods: [pod('a', 'deleted')],
      want: [],
      active: 0,
    },
    {
      name: 'suspended: active pods are deleted, the clock stops',
      j: job({ suspend: true }),
      pods: [pod('a', 'running')],
      want: ['delete a', 'event Suspended'],
      active: 0,
      started: false,
    },
  ])('$name', ({ j, pods, want, active, started }) => {
    const d = decide(j, pods);
    expect(summary(d.actions)).toEqual(want);
    expect(d.status.active ?? 0).toBe(active);
    expect(d.status.startTime !== undefined).toBe(started ?? true);
  });
});

describe('decideJob: counting finished pods exactly once', () => {
  it('a newly finished pod is recorded as uncounted first, its finalizer kept', () => {
    const d = decide(job(), [pod('a', 'succeeded')]);
    expect(summary(d.actions)).toEqual([]);
    expect(d.status.uncountedTerminatedPods).toEqual({ succeeded: ['a'] });
    expect(d.status.succeeded).toBeUndefined();
    expect(conditionTypes(d)).toEqual([]);
  });

  it('once recorded, its finalizer is removed', () => {
    const d = decide(job({}, { startTime: START, uncountedTerminatedPods: { succeeded: ['a'] } }), [
      pod('a', 'succeeded'),
    ]);
    expect(summary(d.actions)).toEqual(['release a']);
    expect(d.status.succeeded).toBeUndefined();
  });

  it('once released, it is counted and the Job completes', () => {
    const d = decide(job({}, { startTime: START, uncountedTerminatedPods: { succeeded: ['a'] } }), [
      pod('a', 'succeeded', false),
    ]);
    expect(d.status).toMatchObject({ succeeded: 1, uncountedTerminatedPods: {}, completionTime: NOW_ISO });
    expect(conditionTypes(d)).toEqual(['Complete']);
    expect(summary(d.actions)).toEqual(['event Completed']);
  });

  it('a counted pod (no finalizer, not uncounted) is never counted again', () => {
    const d = decide(job({ completions: 3, parallelism: 2 }, { startTime: START, succeeded: 1 }), [
      pod('a', 'succeeded', false),
      pod('b', 'running'),
    ]);
    expect(d.status.succeeded).toBe(1);
    expect(summary(d.actions)).toEqual(['create 1']);
  });

  it('a deleted running pod counts as failed (podReplacementPolicy TerminatingOrFailed)', () => {
    expect(decide(job(), [pod('a', 'deleted')]).status.uncountedTerminatedPods).toEqual({ failed: ['a'] });
    expect(
      decide(job({ podReplacementPolicy: 'Failed' }), [pod('a', 'deleted')]).status.uncountedTerminatedPods,
    ).toEqual({});
  });
});

describe('decideJob: failure', () => {
  it.each([
    {
      name: 'failures up to backoffLimit are retried after the backoff',
      j: job({ backoffLimit: 2 }, { startTime: START, failed: 2 }),
      pods: [pod('a', 'failed', false), failedAt('b', '2024-05-01T11:59:55Z')],
      want: [],
      conditions: [],
      requeue: true,
    },
    {
      name: 'more failures than backoffLimit fail the Job',
      j: job({ backoffLimit: 2 }, { startTime: START, failed: 3 }),
      pods: [],
      want: ['event BackoffLimitExceeded'],
      conditions: ['Failed:BackoffLimitExceeded'],
      requeue: false,
    },
    {
      name: 'OnFailure: container restarts count',
      j: job({ backoffLimit: 2, template: { spec: { containers: [], restartPolicy: 'OnFailure' } } }),
      pods: [pod('a', 'running', true, 2)],
      want: ['delete a'],
      conditions: [],
      requeue: false,
    },
    {
      name: 'past activeDeadlineSeconds: active pods deleted',
      j: job({ activeDeadlineSeconds: 30 }),
      pods: [pod('a', 'running')],
      want: ['delete a'],
      conditions: [],
      requeue: false,
    },
    {
      name: 'past the deadline with nothing left to count: DeadlineExceeded',
      j: job({ activeDeadlineSeconds: 30 }, { startTime: START, failed: 1 }),
      pods: [],
      want: ['event DeadlineExceeded'],
      conditions: ['Failed:DeadlineExceeded'],
      requeue: false,
    },
    {
      name: 'before the deadline: looked at again when it passes',
      j: job({ activeDeadlineSeconds: 120 }),
      pods: [pod('a', 'running')],
      want: [],
      conditions: [],
      requeue: true,
    },
  ])('$name', ({ j, pods, want, conditions, requeue }) => {
    const d = decide(j, pods);
    expect(summary(d.actions)).toEqual(want);
    expect(conditionTypes(d)).toEqual(conditions);
    expect(d.requeueAfterMs !== undefined).toBe(requeue);
  });

  it('after the backoff delay the failed pod is replaced', () => {
    const j = job({ backoffLimit: 6 }, { startTime: START, failed: 1 });
    const failedLongAgo: Pod = {
      ...pod('a', 'failed', false),
      status: {
        phase: 'Failed',
        conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: '2024-05-01T11:00:00Z' }],
      },
    };
    expect(summary(decide(j, [failedLongAgo]).actions)).toEqual(['create 1']);
  });
});

describe('the pod of a Job', () => {
  it('is generated from the template, controlled by the Job and held by the tracking finalizer', () => {
    const j = job({
      template: {
        metadata: { labels: { 'job-name': 'pi' } },
        spec: { containers: [{ name: 'c', image: 'i' }], restartPolicy: 'Never' },
      },
    });
    expect(newJobPod(j).metadata).toEqual({
      generateName: 'pi-',
      namespace: 'ns',
      labels: { 'job-name': 'pi' },
      finalizers: ['batch.kubernetes.io/job-tracking'],
      ownerReferences: [
        { apiVersion: 'batch/v1', kind: 'Job', name: 'pi', uid: 'job-uid', controller: true, blockOwnerDeletion: true },
      ],
    });
  });
});

describe('decideTtl', () => {
  const finished = (ttl: number | undefined, at = '2024-05-01T11:59:00Z'): Job => ({
    ...job({ ttlSecondsAfterFinished: ttl }),
    status: { conditions: [{ type: 'Complete', status: 'True', lastTransitionTime: at }] },
  });
  it.each([
    { name: 'no TTL: kept', j: finished(undefined), want: { kind: 'none' } },
    { name: 'running: kept', j: job({ ttlSecondsAfterFinished: 0 }), want: { kind: 'none' } },
    { name: 'TTL expired: deleted', j: finished(60), want: { kind: 'delete' } },
    { name: 'TTL 0: deleted at once', j: finished(0), want: { kind: 'delete' } },
    { name: 'TTL not yet expired: wait for the rest', j: finished(100), want: { kind: 'wait', ms: 40_000 } },
  ])('$name', ({ j, want }) => {
    expect(decideTtl(j, NOW)).toEqual(want);
  });
});

describe('Indexed Jobs', () => {
  const indexedJob = (status: Job['status'] = { startTime: START }) =>
    job({ completionMode: 'Indexed', completions: 5, parallelism: 2 }, status);
  const indexedPod = (name: string, index: number, state: PodState, tracked = true): Pod => {
    const p = pod(name, state, tracked);
    return {
      ...p,
      metadata: { ...p.metadata, annotations: { 'batch.kubernetes.io/job-completion-index': String(index) } },
    };
  };
  const created = (d: ReturnType<typeof decide>) =>
    d.actions.flatMap((a) => (a.kind === 'createPods' ? [...(a.indexes ?? [])] : []));

  it('creates the lowest indexes neither done nor running', () => {
    expect(created(decide(indexedJob(), []))).toEqual([0, 1]);
    expect(
      created(decide(indexedJob({ startTime: START, completedIndexes: '0,2' }), [indexedPod('a', 1, 'running')])),
    ).toEqual([3]);
  });

  it('counts each index once and lists them as kube does', () => {
    const d = decide(indexedJob({ startTime: START, completedIndexes: '0' }), [
      indexedPod('a', 1, 'succeeded'),
      indexedPod('b', 2, 'succeeded'),
      indexedPod('c', 0, 'succeeded', false),
    ]);
    expect(d.status).toMatchObject({ completedIndexes: '0-2', succeeded: 3 });
  });

  it('a second pod of an index already held is surplus', () => {
    expect(
      summary(decide(indexedJob(), [indexedPod('a', 1, 'running'), indexedPod('b', 1, 'running')]).actions),
    ).toEqual(['delete b', 'create 1']);
  });

  it('completes when every index succeeded', () => {
    const d = decide(indexedJob({ startTime: START, completedIndexes: '0-4' }), []);
    expect(conditionTypes(d)).toEqual(['Complete']);
  });

  it('its pods carry their index: name, annotation, label, hostname, JOB_COMPLETION_INDEX', () => {
    const p = newJobPod(job({ completionMode: 'Indexed', completions: 3 }), 2);
    expect(p.metadata).toMatchObject({
      generateName: 'pi-2-',
      labels: { 'batch.kubernetes.io/job-completion-index': '2' },
      annotations: { 'batch.kubernetes.io/job-completion-index': '2' },
    });
    expect(p.spec?.hostname).toBe('pi-2');
    expect(p.spec?.containers[0]?.env).toEqual([
      {
        name: 'JOB_COMPLETION_INDEX',
        valueFrom: { fieldRef: { fieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']" } },
      },
    ]);
  });

  it.each([
    ['', []],
    ['1', [1]],
    ['1,3-5,7,8', [1, 3, 4, 5, 7, 8]],
  ])('completedIndexes %j round-trips', async (text, list) => {
    const { formatIndexes, parseIndexes } = await import('./indexed.js');
    expect([...parseIndexes(text)]).toEqual(list);
    expect(formatIndexes(new Set(list))).toBe(text);
  });
});

describe('podFailurePolicy', () => {
  const policy = {
    rules: [
      { action: 'FailJob', onExitCodes: { containerName: 'c', operator: 'In', values: [42] } },
      { action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] },
    ],
  };
  const withPolicy = (status: Job['status'] = { startTime: START }) =>
    job({ podFailurePolicy: policy, podReplacementPolicy: 'Failed' }, status);
  const exited = (name: string, code: number): Pod => {
    const p = pod(name, 'failed');
    return {
      ...p,
      metadata: { ...p.metadata, namespace: 'ns' },
      status: {
        phase: 'Failed',
        containerStatuses: [
          {
            name: 'c',
            image: 'i',
            imageID: '',
            ready: false,
            restartCount: 0,
            state: { terminated: { exitCode: code } },
          },
        ],
      },
    };
  };

  it('an exit code of a FailJob rule marks the Job FailureTarget, then Failed once counted', () => {
    const d = decide(withPolicy(), [exited('a', 42)]);
    expect(d.status.uncountedTerminatedPods).toEqual({ failed: ['a'] });
    expect(conditionTypes(d)).toEqual(['FailureTarget:PodFailurePolicy']);
    expect(d.status.conditions?.[0]?.message).toBe(
      'Container c for pod ns/a failed with exit code 42 matching FailJob rule at index 0',
    );
    const done = decide(withPolicy(d.status), [
      { ...exited('a', 42), metadata: { ...exited('a', 42).metadata, finalizers: [] } },
    ]);
    expect(conditionTypes(done)).toEqual(['FailureTarget:PodFailurePolicy', 'Failed:PodFailurePolicy']);
  });

  it('a failure an Ignore rule matches is not counted: the pod is released and replaced', () => {
    const disrupted: Pod = {
      ...exited('a', 1),
      status: { phase: 'Failed', conditions: [{ type: 'DisruptionTarget', status: 'True' }] },
    };
    const d = decide(withPolicy(), [disrupted]);
    expect(summary(d.actions)).toEqual(['release a', 'create 1']);
    expect(d.status.uncountedTerminatedPods).toEqual({});
    expect(d.status.failed).toBeUndefined();
  });

  it('any other failure counts against backoffLimit', () => {
    expect(decide(withPolicy(), [exited('a', 1)]).status.uncountedTerminatedPods).toEqual({ failed: ['a'] });
  });
});

describe('backoffLimitPerIndex', () => {
  const perIndexJob = (status: Job['status'] = { startTime: START }, extra: Partial<NonNullable<Job['spec']>> = {}) =>
    job(
      {
        completionMode: 'Indexed',
        completions: 2,
        parallelism: 2,
        backoffLimit: 2147483647,
        backoffLimitPerIndex: 1,
        ...extra,
      },
      status,
    );
  const failedOf = (name: string, index: number, before: number): Pod => {
    const p = pod(name, 'failed', false);
    return {
      ...p,
      metadata: {
        ...p.metadata,
        annotations: {
          'batch.kubernetes.io/job-completion-index': String(index),
          'batch.kubernetes.io/job-index-failure-count': String(before),
        },
      },
    };
  };
  const running = (name: string, index: number): Pod => {
    const p = pod(name, 'running');
    return {
      ...p,
      metadata: { ...p.metadata, annotations: { 'batch.kubernetes.io/job-completion-index': String(index) } },
    };
  };

  it('a failed index within its limit gets a pod that knows its failures', () => {
    const d = decide(perIndexJob({ startTime: START, failed: 1 }), [failedOf('a', 0, 0), running('b', 1)]);
    expect(d.actions).toContainEqual({ kind: 'createPods', count: 1, indexes: [0], failures: [1] });
    expect(d.status.failedIndexes).toBe('');
  });

  it('past its limit the index fails for good, and with nothing else left the Job fails', () => {
    const d = decide(perIndexJob({ startTime: START, failed: 2, completedIndexes: '1' }), [
      failedOf('a', 0, 0),
      failedOf('b', 0, 1),
    ]);
    expect(d.status.failedIndexes).toBe('0');
    expect(conditionTypes(d)).toEqual(['Failed:FailedIndexes']);
  });

  it('the pod of an index says how often the index failed before', () => {
    expect(newJobPod(perIndexJob(), 0, 1).metadata?.annotations).toEqual({
      'batch.kubernetes.io/job-completion-index': '0',
      'batch.kubernetes.io/job-index-failure-count': '1',
    });
  });

  it('more failed indexes than maxFailedIndexes fail the Job at once', () => {
    const d = decide(perIndexJob({ startTime: START, failed: 2 }, { maxFailedIndexes: 0 }), [
      failedOf('a', 0, 1),
      running('b', 1),
    ]);
    expect(summary(d.actions)).toEqual(['delete b']);
    expect(d.status.failedIndexes).toBe('0');
  });
});
