import { describe, expect, it } from 'vitest';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { computePodActions, crashLoopDelayMs, type ContainerInfo, type RuntimePod } from './pod-actions.js';
import { podPhase, runtimePodStatus } from './pod-status.js';

const T = 1_000_000_000;
const pod = (spec: Partial<NonNullable<Pod['spec']>> = {}, meta: Partial<NonNullable<Pod['metadata']>> = {}): Pod => ({
  metadata: { name: 'p', namespace: 'default', uid: 'u1', ...meta },
  spec: { containers: [{ name: 'app', image: 'img' }], ...spec },
});
const sb = (id = 's1', ready = true, attempt = 0): RuntimePod['sandboxes'][number] => ({
  id,
  ready,
  attempt,
  createdAtMs: T + attempt,
});
const ctr = (name: string, o: Partial<ContainerInfo> = {}): ContainerInfo => ({
  id: `${name}-${o.attempt ?? 0}`,
  sandboxId: 's1',
  name,
  attempt: 0,
  state: 'running',
  exitCode: 0,
  reason: '',
  message: '',
  createdAtMs: T,
  startedAtMs: T,
  finishedAtMs: 0,
  image: 'img',
  imageRef: 'sha256:x',
  ...o,
});

describe('computePodActions', () => {
  it('creates a sandbox and starts the containers of a new pod', () => {
    const a = computePodActions(pod(), { sandboxes: [], containers: [] }, T);
    expect(a).toMatchObject({
      createSandbox: true,
      killPod: false,
      sandboxAttempt: 0,
      start: [{ name: 'app', init: false, attempt: 0 }],
    });
  });

  it('runs init containers one at a time, in order, before the containers', () => {
    const p = pod({ initContainers: [{ name: 'i1' }, { name: 'i2' }] });
    expect(computePodActions(p, { sandboxes: [], containers: [] }, T).start).toEqual([
      { name: 'i1', init: true, attempt: 0 },
    ]);
    expect(computePodActions(p, { sandboxes: [sb()], containers: [ctr('i1')] }, T).start).toEqual([]);
    const i1done = ctr('i1', { state: 'exited', exitCode: 0, finishedAtMs: T });
    expect(computePodActions(p, { sandboxes: [sb()], containers: [i1done] }, T).start).toEqual([
      { name: 'i2', init: true, attempt: 0 },
    ]);
    const i2done = ctr('i2', { state: 'exited', exitCode: 0, finishedAtMs: T });
    expect(computePodActions(p, { sandboxes: [sb()], containers: [i1done, i2done] }, T).start).toEqual([
      { name: 'app', init: false, attempt: 0 },
    ]);
  });

  it.each([
    { policy: 'Always' as const, exitCode: 0, restarts: true },
    { policy: 'Always' as const, exitCode: 1, restarts: true },
    { policy: 'OnFailure' as const, exitCode: 0, restarts: false },
    { policy: 'OnFailure' as const, exitCode: 1, restarts: true },
    { policy: 'Never' as const, exitCode: 1, restarts: false },
  ])(
    'restartPolicy $policy, exit $exitCode: restarts=$restarts (after the backoff)',
    ({ policy, exitCode, restarts }) => {
      const rt = { sandboxes: [sb()], containers: [ctr('app', { state: 'exited', exitCode, finishedAtMs: T })] };
      const later = computePodActions(pod({ restartPolicy: policy }), rt, T + CRASH);
      expect(later.start).toEqual(restarts ? [{ name: 'app', init: false, attempt: 1 }] : []);
    },
  );

  it('waits out the crash-loop backoff: the first restart at once, then 10 s doubling to 5 min', () => {
    expect([0, 1, 2, 3, 4, 5, 6, 10].map(crashLoopDelayMs)).toEqual([
      0, 10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000,
    ]);
    const rt = {
      sandboxes: [sb()],
      containers: [ctr('app', { state: 'exited', exitCode: 1, attempt: 2, finishedAtMs: T })],
    };
    const soon = computePodActions(pod(), rt, T + 19_000);
    expect(soon.start).toEqual([]);
    expect(soon.backingOff.get('app')).toBe(1_000);
    expect(computePodActions(pod(), rt, T + 20_000).start).toEqual([{ name: 'app', init: false, attempt: 3 }]);
    const first = { sandboxes: [sb()], containers: [ctr('app', { state: 'exited', exitCode: 1, finishedAtMs: T })] };
    expect(computePodActions(pod(), first, T).start).toEqual([{ name: 'app', init: false, attempt: 1 }]);
  });

  it('resets the crash-loop backoff after an attempt that ran over 10 min: that exit restarts at once, the next waits 10 s', () => {
    const MIN = 60_000;
    const short = (attempt: number) =>
      ctr('app', {
        state: 'exited',
        exitCode: 1,
        attempt,
        startedAtMs: T + attempt * MIN,
        finishedAtMs: T + attempt * MIN + 1_000,
      });
    const long = ctr('app', {
      state: 'exited',
      exitCode: 1,
      attempt: 3,
      startedAtMs: T,
      finishedAtMs: T + 10 * MIN + 1,
    });
    expect(
      computePodActions(
        pod(),
        { sandboxes: [sb()], containers: [short(0), short(1), short(2), long] },
        long.finishedAtMs,
      ).start,
    ).toEqual([{ name: 'app', init: false, attempt: 4 }]);
    const next = ctr('app', {
      state: 'exited',
      exitCode: 1,
      attempt: 4,
      startedAtMs: T + 11 * MIN,
      finishedAtMs: T + 11 * MIN + 1_000,
    });
    const after = computePodActions(
      pod(),
      { sandboxes: [sb()], containers: [short(0), short(1), short(2), long, next] },
      next.finishedAtMs + 9_000,
    );
    expect(after.start).toEqual([]);
    expect(after.backingOff.get('app')).toBe(1_000);
    // Exactly 10 min is not over it: the doubling goes on (attempt 3 waits 40 s).
    const tenMin = ctr('app', { state: 'exited', exitCode: 1, attempt: 3, startedAtMs: T, finishedAtMs: T + 10 * MIN });
    expect(
      computePodActions(pod(), { sandboxes: [sb()], containers: [tenMin] }, tenMin.finishedAtMs).backingOff.get('app'),
    ).toBe(40_000);
  });

  it('kills and removes everything of a terminating pod, and starts nothing', () => {
    const a = computePodActions(
      pod({}, { deletionTimestamp: '2026-01-01T00:00:00Z' }),
      { sandboxes: [sb()], containers: [ctr('app')] },
      T,
    );
    expect(a).toMatchObject({ killPod: true, removePod: true, createSandbox: false, start: [] });
  });

  it('makes a new sandbox when the old one died, killing what is left of it', () => {
    const a = computePodActions(
      pod(),
      { sandboxes: [sb('s1', false, 0)], containers: [ctr('app', { state: 'exited', finishedAtMs: T })] },
      T,
    );
    expect(a).toMatchObject({ killPod: true, createSandbox: true, sandboxAttempt: 1 });
  });

  it('does not make a new sandbox for a Never pod whose containers already ran', () => {
    const a = computePodActions(
      pod({ restartPolicy: 'Never' }),
      { sandboxes: [sb('s1', false)], containers: [ctr('app', { state: 'exited', finishedAtMs: T })] },
      T,
    );
    expect(a.createSandbox).toBe(false);
  });
});

const CRASH = 10_000;

describe('runtimePodStatus', () => {
  it('a running container: Running, ready, podIP is the node address', () => {
    const s = runtimePodStatus({
      pod: pod(),
      rt: { sandboxes: [sb()], containers: [ctr('app')] },
      waiting: new Map(),
      sandboxId: 's1',
      hostIP: '10.0.0.5',
      nowMs: T,
    });
    expect(s).toMatchObject({ phase: 'Running', podIP: '10.0.0.5', hostIP: '10.0.0.5' });
    expect((s['containerStatuses'] as unknown[])[0]).toMatchObject({
      name: 'app',
      ready: true,
      restartCount: 0,
      state: { running: {} },
      containerID: 'containerd://app-0',
    });
    expect(s['conditions']).toContainEqual(expect.objectContaining({ type: 'Ready', status: 'True' }));
  });

  it('a crash-looping container: waiting CrashLoopBackOff with its last termination and restart count', () => {
    const rt = {
      sandboxes: [sb()],
      containers: [ctr('app', { state: 'exited', exitCode: 2, attempt: 3, finishedAtMs: T })],
    };
    const s = runtimePodStatus({
      pod: pod(),
      rt,
      waiting: new Map([
        ['app', { reason: 'CrashLoopBackOff', message: 'back-off 1m20s restarting failed container=app' }],
      ]),
      sandboxId: 's1',
      nowMs: T,
    });
    expect((s['containerStatuses'] as unknown[])[0]).toMatchObject({
      restartCount: 3,
      ready: false,
      state: { waiting: { reason: 'CrashLoopBackOff' } },
      lastState: { terminated: { exitCode: 2, reason: 'Error' } },
    });
    expect(s['phase']).toBe('Running');
  });

  it.each([
    { policy: 'Never' as const, exitCode: 0, phase: 'Succeeded', reason: 'Completed' },
    { policy: 'Never' as const, exitCode: 1, phase: 'Failed', reason: 'Error' },
    { policy: 'OnFailure' as const, exitCode: 0, phase: 'Succeeded', reason: 'Completed' },
  ])('restartPolicy $policy, exit $exitCode: $phase', ({ policy, exitCode, phase, reason }) => {
    const p = pod({ restartPolicy: policy });
    const rt = { sandboxes: [sb()], containers: [ctr('app', { state: 'exited', exitCode, finishedAtMs: T })] };
    const s = runtimePodStatus({ pod: p, rt, waiting: new Map(), sandboxId: 's1', nowMs: T });
    expect(s['phase']).toBe(phase);
    expect((s['containerStatuses'] as unknown[])[0]).toMatchObject({ state: { terminated: { exitCode, reason } } });
  });

  it('an image that cannot be pulled: Pending, waiting ErrImagePull', () => {
    const s = runtimePodStatus({
      pod: pod(),
      rt: { sandboxes: [sb()], containers: [] },
      waiting: new Map([['app', { reason: 'ErrImagePull', message: 'not found' }]]),
      sandboxId: 's1',
      nowMs: T,
    });
    expect(s['phase']).toBe('Pending');
    expect((s['containerStatuses'] as unknown[])[0]).toMatchObject({
      state: { waiting: { reason: 'ErrImagePull', message: 'not found' } },
    });
  });

  it('init containers not done: Pending and not Initialized', () => {
    const p = pod({ initContainers: [{ name: 'i1' }] });
    const rt = { sandboxes: [sb()], containers: [ctr('i1')] };
    expect(podPhase(p, [], rt)).toBe('Pending');
    const s = runtimePodStatus({ pod: p, rt, waiting: new Map(), sandboxId: 's1', nowMs: T });
    expect(s['conditions']).toContainEqual(
      expect.objectContaining({
        type: 'Initialized',
        status: 'False',
        reason: 'ContainersNotInitialized',
        message: 'containers with incomplete status: [i1]',
      }),
    );
    expect((s['containerStatuses'] as unknown[])[0]).toMatchObject({
      state: { waiting: { reason: 'PodInitializing' } },
    });
  });
});

describe('runtimePodStatus before containers and with probes', () => {
  const statuses = (s: Record<string, unknown>, key = 'containerStatuses'): Array<Record<string, unknown>> =>
    s[key] as Array<Record<string, unknown>>;

  it.each([
    { name: 'no init containers', spec: {}, want: { init: [], main: 'ContainerCreating' } },
    {
      name: 'with init containers',
      spec: { initContainers: [{ name: 'i1' }, { name: 'i2' }] },
      want: { init: ['PodInitializing', 'PodInitializing'], main: 'PodInitializing' },
    },
  ])('nothing in the runtime yet ($name): Pending, every container waiting', ({ spec, want }) => {
    const s = runtimePodStatus({ pod: pod(spec), rt: { sandboxes: [], containers: [] }, waiting: new Map(), nowMs: T });
    expect(s['phase']).toBe('Pending');
    expect(
      (statuses(s, 'initContainerStatuses') ?? []).map(
        (c) => (c['state'] as { waiting: { reason: string } }).waiting.reason,
      ),
    ).toEqual(want.init);
    expect(statuses(s)[0]).toMatchObject({
      ready: false,
      started: false,
      restartCount: 0,
      state: { waiting: { reason: want.main } },
    });
  });

  it('ready and started come from the probes; a completed init container is ready', () => {
    const p = pod({ initContainers: [{ name: 'i1' }] });
    const rt = {
      sandboxes: [sb()],
      containers: [ctr('i1', { state: 'exited', exitCode: 0, finishedAtMs: T }), ctr('app')],
    };
    const s = runtimePodStatus({
      pod: p,
      rt,
      waiting: new Map(),
      sandboxId: 's1',
      nowMs: T,
      probes: () => ({ started: true, ready: false }),
    });
    expect(statuses(s)[0]).toMatchObject({ started: true, ready: false, state: { running: {} } });
    expect(statuses(s, 'initContainerStatuses')[0]).toMatchObject({
      ready: true,
      state: { terminated: { reason: 'Completed' } },
    });
    expect(s['conditions']).toContainEqual(
      expect.objectContaining({
        type: 'ContainersReady',
        status: 'False',
        reason: 'ContainersNotReady',
        message: 'containers with unready status: [app]',
      }),
    );
    expect((s['conditions'] as Array<{ type: string; status: string }>).map((c) => [c.type, c.status])).toEqual([
      ['PodReadyToStartContainers', 'True'],
      ['Initialized', 'True'],
      ['Ready', 'False'],
      ['ContainersReady', 'False'],
      ['PodScheduled', 'True'],
    ]);
    expect(s['phase']).toBe('Running');
  });
});

describe('computePodActions with failed probes', () => {
  it.each([
    {
      policy: 'Always' as const,
      probe: 'liveness' as const,
      restarts: true,
      message: 'Container app failed liveness probe, will be restarted',
    },
    {
      policy: 'OnFailure' as const,
      probe: 'startup' as const,
      restarts: true,
      message: 'Container app failed startup probe, will be restarted',
    },
    {
      policy: 'Never' as const,
      probe: 'liveness' as const,
      restarts: false,
      message: 'Container app failed liveness probe',
    },
  ])('$probe failure under $policy: killed, restarted at once=$restarts', ({ policy, probe, restarts, message }) => {
    const live = ctr('app', { attempt: 2 });
    const a = computePodActions(
      pod({ restartPolicy: policy }),
      { sandboxes: [sb()], containers: [live] },
      T,
      new Map([[live.id, probe]]),
    );
    expect(a.kill).toEqual([{ container: live, message }]);
    expect(a.start).toEqual(restarts ? [{ name: 'app', init: false, attempt: 3 }] : []);
  });

  it("a probe's own terminationGracePeriodSeconds is the kill's grace", () => {
    const live = ctr('app');
    const p = pod({
      containers: [
        { name: 'app', image: 'img', livenessProbe: { exec: { command: ['x'] }, terminationGracePeriodSeconds: 5 } },
      ],
    });
    expect(
      computePodActions(p, { sandboxes: [sb()], containers: [live] }, T, new Map([[live.id, 'liveness']])).kill[0]
        ?.graceSeconds,
    ).toBe(5);
  });

  it('a failed probe of a container that already exited changes nothing', () => {
    const old = ctr('app', { state: 'exited', exitCode: 1, attempt: 1, finishedAtMs: T });
    const a = computePodActions(pod(), { sandboxes: [sb()], containers: [old] }, T, new Map([[old.id, 'liveness']]));
    expect(a.kill).toEqual([]);
    expect(a.backingOff.get('app')).toBeGreaterThan(0);
  });
});
