import { describe, expect, it } from 'vitest';
import type { PersistentVolume, PersistentVolumeClaim, Pod } from 'kubernetes-types/core/v1.js';
import {
  PVC_PROTECTION_FINALIZER,
  PV_PROTECTION_FINALIZER,
  applyFinalizerDecision,
  pvProtectionDecision,
  pvcProtectionDecision,
} from './decisions.js';

const DELETING = '2024-01-01T00:00:00Z';

function claim(
  o: { deleting?: boolean; finalizer?: boolean; owner?: string; name?: string } = {},
): PersistentVolumeClaim {
  return {
    metadata: {
      name: o.name ?? 'data',
      namespace: 'ns',
      ...(o.deleting ? { deletionTimestamp: DELETING } : {}),
      ...(o.finalizer === false ? {} : { finalizers: [PVC_PROTECTION_FINALIZER] }),
      ...(o.owner
        ? { ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'p', uid: o.owner, controller: true }] }
        : {}),
    },
  };
}

function pod(
  o: { node?: string; phase?: string; ns?: string; claimName?: string; ephemeral?: string; shutDown?: boolean } = {},
): Pod {
  return {
    metadata: {
      name: 'p',
      namespace: o.ns ?? 'ns',
      uid: 'pod-uid',
      ...(o.shutDown ? { deletionTimestamp: DELETING, deletionGracePeriodSeconds: 0 } : {}),
    },
    spec: {
      containers: [],
      ...(o.node === undefined ? { nodeName: 'n1' } : o.node ? { nodeName: o.node } : {}),
      volumes: o.ephemeral
        ? [{ name: o.ephemeral, ephemeral: {} }]
        : [{ name: 'v', persistentVolumeClaim: { claimName: o.claimName ?? 'data' } }],
    },
    status: { phase: o.phase ?? 'Running' },
  };
}

describe('pvcProtectionDecision', () => {
  it.each([
    ['not deleting, finalizer present', claim(), [], 'none'],
    ['not deleting, finalizer missing → add', claim({ finalizer: false }), [], 'add'],
    ['deleting, unused → remove', claim({ deleting: true }), [], 'remove'],
    ['deleting, running pod → keep', claim({ deleting: true }), [pod()], 'keep'],
    ['deleting, scheduled pending pod → keep', claim({ deleting: true }), [pod({ phase: 'Pending' })], 'keep'],
    ['deleting, unscheduled pod does not count → remove', claim({ deleting: true }), [pod({ node: '' })], 'remove'],
    [
      'deleting, Succeeded pod still blocks (Kubernetes)',
      claim({ deleting: true }),
      [pod({ phase: 'Succeeded' })],
      'keep',
    ],
    ['deleting, pod in another namespace → remove', claim({ deleting: true }), [pod({ ns: 'other' })], 'remove'],
    ['deleting, pod using another claim → remove', claim({ deleting: true }), [pod({ claimName: 'x' })], 'remove'],
    ['deleting without finalizer → none', claim({ deleting: true, finalizer: false }), [pod()], 'none'],
    [
      'ephemeral claim of the pod → keep',
      claim({ deleting: true, name: 'p-scratch', owner: 'pod-uid' }),
      [pod({ ephemeral: 'scratch' })],
      'keep',
    ],
    [
      'ephemeral claim not owned by the pod → remove',
      claim({ deleting: true, name: 'p-scratch', owner: 'else' }),
      [pod({ ephemeral: 'scratch' })],
      'remove',
    ],
    [
      'ephemeral, pod shut down → remove',
      claim({ deleting: true, name: 'p-scratch', owner: 'pod-uid' }),
      [pod({ ephemeral: 'scratch', shutDown: true })],
      'remove',
    ],
  ] as const)('%s', (_n, c, pods, want) => {
    expect(pvcProtectionDecision(c, pods).kind).toBe(want);
  });

  it('ignoreTerminatedPods: Succeeded/Failed pods stop blocking', () => {
    const o = { ignoreTerminatedPods: true };
    expect(pvcProtectionDecision(claim({ deleting: true }), [pod({ phase: 'Succeeded' })], o).kind).toBe('remove');
    expect(pvcProtectionDecision(claim({ deleting: true }), [pod({ phase: 'Failed' })], o).kind).toBe('remove');
    expect(pvcProtectionDecision(claim({ deleting: true }), [pod({ phase: 'Running' })], o)).toEqual({
      kind: 'keep',
      usedBy: ['ns/p'],
    });
  });
});

describe('pvProtectionDecision', () => {
  const pv = (phase: string, deleting: boolean, finalizer = true): PersistentVolume => ({
    metadata: {
      name: 'v',
      ...(deleting ? { deletionTimestamp: DELETING } : {}),
      ...(finalizer ? { finalizers: [PV_PROTECTION_FINALIZER] } : {}),
    },
    status: { phase },
  });
  it.each([
    ['Bound', true, true, 'keep'],
    ['Released', true, true, 'remove'],
    ['Available', true, true, 'remove'],
    ['Failed', true, true, 'remove'],
    ['Bound', false, true, 'none'],
    ['Bound', false, false, 'add'],
    ['Available', true, false, 'none'],
  ] as const)('phase %s deleting=%s finalizer=%s → %s', (phase, deleting, fin, want) => {
    expect(pvProtectionDecision(pv(phase, deleting, fin)).kind).toBe(want);
  });

  it('applyFinalizerDecision adds once and removes only ours', () => {
    expect(applyFinalizerDecision(['a'], PV_PROTECTION_FINALIZER, { kind: 'add' })).toEqual([
      'a',
      PV_PROTECTION_FINALIZER,
    ]);
    expect(applyFinalizerDecision(['a', PV_PROTECTION_FINALIZER], PV_PROTECTION_FINALIZER, { kind: 'remove' })).toEqual(
      ['a'],
    );
    expect(applyFinalizerDecision(undefined, PV_PROTECTION_FINALIZER, { kind: 'none' })).toEqual([]);
  });
});
