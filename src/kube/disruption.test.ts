import type { Pod } from 'kubernetes-types/core/v1.js';
import type { PodDisruptionBudget } from 'kubernetes-types/policy/v1.js';
import { describe, expect, it } from 'vitest';
import { budgetStatus, DISRUPTED_POD_TIMEOUT_MS, scaled } from './disruption.js';

const NOW = Date.parse('2026-01-01T00:10:00Z');
const pod = (name: string, ready = true, deleting = false): Pod => ({
  metadata: { name, namespace: 'ns', ...(deleting ? { deletionTimestamp: '2026-01-01T00:09:00Z' } : {}) },
  status: { phase: 'Running', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
});
const pdb = (spec: PodDisruptionBudget['spec'], disruptedPods?: Record<string, string>): PodDisruptionBudget => ({
  metadata: { name: 'b', namespace: 'ns', generation: 2 },
  spec,
  ...(disruptedPods
    ? { status: { disruptedPods, currentHealthy: 0, desiredHealthy: 0, disruptionsAllowed: 0, expectedPods: 0 } }
    : {}),
});

describe('budgetStatus', () => {
  it.each([
    {
      name: 'minAvailable 2 of 3 ready',
      spec: { minAvailable: 2 },
      pods: [pod('a'), pod('b'), pod('c')],
      want: [3, 3, 2, 1],
    },
    {
      name: 'minAvailable 50% of 3 rounds up',
      spec: { minAvailable: '50%' },
      pods: [pod('a'), pod('b'), pod('c')],
      want: [3, 3, 2, 1],
    },
    {
      name: 'maxUnavailable 1 of 3, one unready',
      spec: { maxUnavailable: 1 },
      pods: [pod('a'), pod('b', false), pod('c')],
      want: [3, 2, 2, 0],
    },
    {
      name: 'terminating pods are not healthy',
      spec: { minAvailable: 0 },
      pods: [pod('a', true, true), pod('b')],
      want: [2, 1, 0, 1],
    },
    {
      name: 'a recently evicted pod is not healthy',
      spec: { minAvailable: 1 },
      pods: [pod('a'), pod('b')],
      disrupted: { a: '2026-01-01T00:09:30Z' },
      want: [2, 1, 1, 0],
    },
  ])('$name', ({ spec, pods, disrupted, want }) => {
    const s = budgetStatus(pdb(spec, disrupted), pods, NOW, '2026-01-01T00:10:00Z');
    expect([s.expectedPods, s.currentHealthy, s.desiredHealthy, s.disruptionsAllowed]).toEqual(want);
    expect(s.observedGeneration).toBe(2);
    expect(s.conditions?.[0]).toMatchObject({
      type: 'DisruptionAllowed',
      status: want[3]! > 0 ? 'True' : 'False',
      reason: want[3]! > 0 ? 'SufficientPods' : 'InsufficientPods',
    });
  });

  it('forgets a disrupted pod once it is gone, terminating, or past the timeout', () => {
    const old = new Date(NOW - DISRUPTED_POD_TIMEOUT_MS).toISOString();
    const s = budgetStatus(
      pdb(
        { minAvailable: 0 },
        { gone: '2026-01-01T00:09:59Z', going: '2026-01-01T00:09:59Z', stale: old, fresh: '2026-01-01T00:09:59Z' },
      ),
      [pod('going', true, true), pod('stale'), pod('fresh')],
      NOW,
      'x',
    );
    expect(s.disruptedPods).toEqual({ fresh: '2026-01-01T00:09:59Z' });
  });

  it('scales percentages up', () => {
    expect([scaled('10%', 15), scaled(3, 15), scaled('100%', 7)]).toEqual([2, 3, 7]);
  });
});
