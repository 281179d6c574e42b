import type { ContainerStatus, Pod } from 'kubernetes-types/core/v1.js';
import { describe, expect, it } from 'vitest';
import { logContainerId, runningContainerId } from './containers.js';

const pod = (cs: Partial<ContainerStatus>): Pod => ({
  metadata: { name: 'p' },
  status: { containerStatuses: [{ name: 'c', image: 'i', imageID: '', ready: false, restartCount: 0, ...cs }] },
});
const term = (id: string) => ({ terminated: { exitCode: 1, containerID: `containerd://${id}` } });

describe("the kubelet's choice of log", () => {
  it.each([
    { name: 'running', cs: { state: { running: {} }, containerID: 'containerd://now' }, previous: false, want: 'now' },
    {
      name: 'running, previous',
      cs: { state: { running: {} }, containerID: 'containerd://now', lastState: term('before') },
      previous: true,
      want: 'before',
    },
    {
      name: 'crash-looping shows the last run',
      cs: { state: { waiting: { reason: 'CrashLoopBackOff' } }, lastState: term('last') },
      previous: false,
      want: 'last',
    },
    { name: 'terminated', cs: { state: term('done') }, previous: false, want: 'done' },
  ])('$name', ({ cs, previous, want }) => expect(logContainerId(pod(cs), 'c', previous)).toBe(want));

  it.each([
    {
      name: 'no previous',
      cs: { state: { running: {} }, containerID: 'containerd://x' },
      previous: true,
      err: 'previous terminated container "c" in pod "p" not found',
    },
    {
      name: 'creating',
      cs: { state: { waiting: { reason: 'ContainerCreating' } } },
      previous: false,
      err: 'container "c" in pod "p" is waiting to start: ContainerCreating',
    },
    {
      name: 'image pull',
      cs: { state: { waiting: { reason: 'ErrImagePull' } } },
      previous: false,
      err: 'container "c" in pod "p" is waiting to start: image can\'t be pulled',
    },
    { name: 'no state', cs: {}, previous: false, err: 'container "c" in pod "p" is waiting to start - no logs yet' },
  ])('refuses: $name', ({ cs, previous, err }) => expect(() => logContainerId(pod(cs), 'c', previous)).toThrow(err));

  it('refuses a container without a status', () =>
    expect(() => logContainerId(pod({}), 'other', false)).toThrow('container "other" in pod "p" is not available'));

  it('exec needs a running container', () => {
    expect(runningContainerId(pod({ state: { running: {} }, containerID: 'containerd://r' }), 'c')).toBe('r');
    expect(() => runningContainerId(pod({ state: term('t') }), 'c')).toThrow('container not found ("c")');
  });
});
