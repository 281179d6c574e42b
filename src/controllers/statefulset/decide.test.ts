import { describe, expect, it } from 'vitest';
import { decideStatefulSet, type SetAction } from './decide.js';
import { claim, NEW, OLD, pod, set, state } from './fixtures.test-kit.js';

/** Actions as short strings: `+claim www-web-0`, `+pod web-0@web-new`, `-pod web-2 (condemned)`, `owners www-web-2 Pod/web-2`. */
function summary(actions: readonly SetAction[]): string[] {
  return actions.map((a) => {
    switch (a.kind) {
      case 'createClaim':
        return `+claim ${a.claim.metadata?.name}${a.claim.metadata?.ownerReferences ? ` owned by ${a.claim.metadata.ownerReferences.map((r) => `${r.kind}/${r.name}`).join(',')}` : ''}`;
      case 'createPod':
        return `+pod ${a.pod.metadata?.name}@${a.pod.metadata?.labels?.['controller-revision-hash']}`;
      case 'deletePod':
        return `-pod ${a.pod.metadata?.name} (${a.why})`;
      case 'setClaimOwners':
        return `owners ${a.claim.metadata?.name} ${(a.ownerReferences ?? []).map((r) => `${r.kind}/${r.name}`).join(',') || 'none'}`;
    }
  });
}

const sts = set();
const parallel = set({ podManagementPolicy: 'Parallel' });
const one = set({ replicas: 1 });

describe('decideStatefulSet: which pod or claim next', () => {
  it.each([
    {
      name: 'new set, OrderedReady: claim then pod 0 only',
      s: sts,
      pods: [],
      claims: [],
      want: ['+claim www-web-0', '+pod web-0@web-new'],
    },
    {
      name: 'pod 0 not ready yet: wait',
      s: sts,
      pods: [pod(sts, 0, 'pending')],
      claims: [claim('www-web-0')],
      want: [],
    },
    {
      name: 'a pending pod whose claim was deleted gets it again',
      s: sts,
      pods: [pod(sts, 0, 'pending')],
      claims: [],
      want: ['+claim www-web-0'],
    },
    {
      name: 'pod 0 running and ready: pod 1 next',
      s: sts,
      pods: [pod(sts, 0)],
      claims: [claim('www-web-0')],
      want: ['+claim www-web-1', '+pod web-1@web-new'],
    },
    {
      name: 'Parallel: every ordinal at once',
      s: parallel,
      pods: [],
      claims: [],
      want: [
        '+claim www-web-0',
        '+pod web-0@web-new',
        '+claim www-web-1',
        '+pod web-1@web-new',
        '+claim www-web-2',
        '+pod web-2@web-new',
      ],
    },
    {
      name: 'a retained claim is reused, never re-created',
      s: sts,
      pods: [pod(sts, 0)],
      claims: [claim('www-web-0'), claim('www-web-1')],
      want: ['+pod web-1@web-new'],
    },
    {
      name: 'a claim being deleted is waited for',
      s: sts,
      pods: [pod(sts, 0)],
      claims: [claim('www-web-0'), claim('www-web-1', { deletionTimestamp: '2024-05-01T11:00:00Z' })],
      want: [],
    },
    {
      name: 'a claim still owned by a gone pod is waited for',
      s: sts,
      pods: [pod(sts, 0)],
      claims: [
        claim('www-web-0'),
        claim('www-web-1', { ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'web-1', uid: 'old' }] }),
      ],
      want: [],
    },
    {
      name: 'a failed pod is deleted to be re-created',
      s: sts,
      pods: [pod(sts, 0, 'failed')],
      claims: [claim('www-web-0')],
      want: ['-pod web-0 (failed)'],
    },
    {
      name: 'scale 3 → 1: the highest ordinal goes first, one at a time',
      s: one,
      pods: [pod(one, 0), pod(one, 1), pod(one, 2)],
      claims: [],
      want: ['-pod web-2 (condemned)'],
    },
    {
      name: 'scale down waits for the terminating pod',
      s: one,
      pods: [pod(one, 0), pod(one, 1), pod(one, 2, 'terminating')],
      claims: [],
      want: [],
    },
    {
      name: 'scale down waits while a wanted pod is unhealthy',
      s: one,
      pods: [pod(one, 0, 'notReady'), pod(one, 1), pod(one, 2)],
      claims: [],
      want: [],
    },
    {
      name: 'Parallel scale down: all condemned at once',
      s: set({ replicas: 1, podManagementPolicy: 'Parallel' }),
      pods: [pod(one, 0), pod(one, 1), pod(one, 2)],
      claims: [],
      want: ['-pod web-2 (condemned)', '-pod web-1 (condemned)'],
    },
  ])('$name', ({ s, pods, claims, want }) => {
    expect(summary(decideStatefulSet(state(s, pods, claims)).actions)).toEqual(want);
  });
});

describe('decideStatefulSet: rolling update', () => {
  const oldPods = (s = sts) => [pod(s, 0, 'ready', OLD), pod(s, 1, 'ready', OLD), pod(s, 2, 'ready', OLD)];
  const claims = [claim('www-web-0'), claim('www-web-1'), claim('www-web-2')];
  it.each([
    {
      name: 'RollingUpdate replaces the highest ordinal first',
      s: sts,
      pods: oldPods(),
      want: ['-pod web-2 (update)'],
    },
    {
      name: 'one at a time: waits for the replaced pod to be ready',
      s: sts,
      pods: [pod(sts, 0, 'ready', OLD), pod(sts, 1, 'ready', OLD), pod(sts, 2, 'pending')],
      want: [],
    },
    {
      name: 'then the next one down',
      s: sts,
      pods: [pod(sts, 0, 'ready', OLD), pod(sts, 1, 'ready', OLD), pod(sts, 2)],
      want: ['-pod web-1 (update)'],
    },
    {
      name: 'partition 2: ordinals below it keep the old revision',
      s: set({ updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 2 } } }),
      pods: [pod(sts, 0, 'ready', OLD), pod(sts, 1, 'ready', OLD), pod(sts, 2)],
      want: [],
    },
    {
      name: 'OnDelete: nothing is replaced by the controller',
      s: set({ updateStrategy: { type: 'OnDelete' } }),
      pods: oldPods(),
      want: [],
    },
  ])('$name', ({ s, pods, want }) => {
    expect(summary(decideStatefulSet(state(s, pods, claims, OLD)).actions)).toEqual(want);
  });

  it('a pod re-created below the partition gets the current revision', () => {
    const s = set({ updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 2 } } });
    expect(summary(decideStatefulSet(state(s, [pod(s, 0, 'ready', OLD)], claims, OLD)).actions)).toEqual([
      '+pod web-1@web-old',
    ]);
  });
});

describe('decideStatefulSet: claim retention owner references', () => {
  const policy = (whenDeleted: string, whenScaled: string) =>
    set({ replicas: 1, persistentVolumeClaimRetentionPolicy: { whenDeleted, whenScaled } });
  it.each([
    { name: 'Retain/Retain: no owners', s: policy('Retain', 'Retain'), want: ['-pod web-1 (condemned)'] },
    {
      name: 'whenDeleted Delete: the set owns the wanted claims, the condemned too (scaling keeps them)',
      s: policy('Delete', 'Retain'),
      want: ['owners www-web-1 StatefulSet/web', 'owners www-web-0 StatefulSet/web', '-pod web-1 (condemned)'],
    },
    {
      name: 'whenScaled Delete: the condemned claim is owned by its pod before the pod goes',
      s: policy('Retain', 'Delete'),
      want: ['owners www-web-1 Pod/web-1', '-pod web-1 (condemned)'],
    },
    {
      name: 'Delete/Delete: set for wanted, pod (only) for condemned',
      s: policy('Delete', 'Delete'),
      want: ['owners www-web-1 Pod/web-1', 'owners www-web-0 StatefulSet/web', '-pod web-1 (condemned)'],
    },
  ])('$name', ({ s, want }) => {
    expect(
      summary(decideStatefulSet(state(s, [pod(s, 0), pod(s, 1)], [claim('www-web-0'), claim('www-web-1')])).actions),
    ).toEqual(want);
  });

  it('whenDeleted Delete: a new claim is created owned by the set (not as controller)', () => {
    const s = set({ persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Retain' } });
    const a = decideStatefulSet(state(s, [], [])).actions[0];
    expect(a).toMatchObject({ kind: 'createClaim' });
    expect(a?.kind === 'createClaim' && a.claim.metadata?.ownerReferences).toEqual([
      { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', uid: 'set-uid' },
    ]);
  });
});

describe('decideStatefulSet: status', () => {
  it('counts replicas, ready, current and updated pods by revision', () => {
    const st = decideStatefulSet(
      state(sts, [pod(sts, 0, 'ready', OLD), pod(sts, 1, 'notReady', OLD), pod(sts, 2)], [], OLD),
    ).status;
    expect(st).toEqual({
      observedGeneration: 1,
      replicas: 3,
      readyReplicas: 2,
      availableReplicas: 2,
      currentReplicas: 2,
      updatedReplicas: 1,
      currentRevision: 'web-old',
      updateRevision: 'web-new',
      collisionCount: 0,
    });
  });

  it('a finished rolling update makes the update revision current', () => {
    const st = decideStatefulSet(state(sts, [pod(sts, 0), pod(sts, 1), pod(sts, 2)], [], OLD)).status;
    expect(st).toMatchObject({ currentRevision: 'web-new', currentReplicas: 3, updatedReplicas: 3 });
  });

  it('a set being deleted only reports status', () => {
    const s = set(
      {},
      { metadata: { name: 'web', namespace: 'ns', uid: 'set-uid', deletionTimestamp: '2024-05-01T11:00:00Z' } },
    );
    expect(decideStatefulSet(state(s, [], [])).actions).toEqual([]);
  });
});

describe('the pod of an ordinal', () => {
  it('has its stable identity, its claims as volumes and its revision', () => {
    const p = pod(sts, 1, 'ready', NEW);
    expect(p.metadata).toMatchObject({
      name: 'web-1',
      labels: {
        app: 'web',
        'statefulset.kubernetes.io/pod-name': 'web-1',
        'apps.kubernetes.io/pod-index': '1',
        'controller-revision-hash': 'web-new',
      },
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'StatefulSet',
          name: 'web',
          uid: 'set-uid',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    });
    expect(p.spec).toMatchObject({
      hostname: 'web-1',
      subdomain: 'nginx',
      volumes: [{ name: 'www', persistentVolumeClaim: { claimName: 'www-web-1' } }],
    });
  });
});
