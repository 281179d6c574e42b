import { describe, expect, it } from 'vitest';
import { changedPods, nextSyncDelayMs, relistFingerprints } from './pleg.js';

const l = (id: string, uid: string, state: string) => ({ id, state, labels: { 'io.kubernetes.pod.uid': uid } });

describe('PLEG relist', () => {
  it('wakes only the pods whose sandboxes or containers changed, appeared or went away', () => {
    const before = relistFingerprints(
      [l('s1', 'a', 'SANDBOX_READY'), l('s2', 'b', 'SANDBOX_READY')],
      [l('c1', 'a', 'CONTAINER_RUNNING'), l('c2', 'b', 'CONTAINER_RUNNING'), l('x', '', 'CONTAINER_RUNNING')],
    );
    expect([...before.keys()].sort()).toEqual(['a', 'b']);
    const same = relistFingerprints(
      [l('s2', 'b', 'SANDBOX_READY'), l('s1', 'a', 'SANDBOX_READY')],
      [l('c2', 'b', 'CONTAINER_RUNNING'), l('c1', 'a', 'CONTAINER_RUNNING')],
    );
    expect(changedPods(before, same)).toEqual(new Set());
    const after = relistFingerprints(
      [l('s1', 'a', 'SANDBOX_READY'), l('s3', 'c', 'SANDBOX_READY')],
      [l('c1', 'a', 'CONTAINER_EXITED'), l('c3', 'c', 'CONTAINER_CREATED')],
    );
    expect(changedPods(before, after)).toEqual(new Set(['a', 'b', 'c']));
  });

  it.each([
    { name: 'nothing pending: the resync period', o: {}, want: 60_000 },
    { name: 'waiting for volumes: retried soon', o: { waitingForVolumes: true }, want: 1_000 },
    {
      name: 'a config error or image pull: retried soon',
      o: { waitingReasons: ['CreateContainerConfigError'] },
      want: 1_000,
    },
    {
      name: 'crash-loop backoff: when it ends',
      o: { waitingReasons: ['CrashLoopBackOff'], backoffLeftMs: [7_000, 3_000] },
      want: 3_000,
    },
    {
      name: 'image pull backoff: when it ends',
      o: { waitingReasons: ['ImagePullBackOff'], backoffLeftMs: [20_000, -5] },
      want: 20_000,
    },
  ])('$name', ({ o, want }) => {
    expect(
      nextSyncDelayMs({
        waitingForVolumes: false,
        waitingReasons: [],
        backoffLeftMs: [],
        resyncMs: 60_000,
        retryMs: 1_000,
        ...o,
      }),
    ).toBe(want);
  });
});
