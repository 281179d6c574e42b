import { describe, expect, it } from 'vitest';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { isPodToSchedule, nodeSchedulingChanged, withScheduledCondition } from './policy.js';
import { node, pod } from './fixtures.test-kit.js';

describe('isPodToSchedule', () => {
  const base = pod('p', []);
  it.each<[string, Pod, boolean]>([
    ['unassigned, default scheduler', base, true],
    ['explicit default-scheduler', { ...base, spec: { ...base.spec!, schedulerName: 'default-scheduler' } }, true],
    ['another scheduler', { ...base, spec: { ...base.spec!, schedulerName: 'other' } }, false],
    ['already assigned', { ...base, spec: { ...base.spec!, nodeName: 'n1' } }, false],
    ['being deleted', { ...base, metadata: { ...base.metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } }, false],
    ['finished', { ...base, status: { phase: 'Succeeded' } }, false],
    ['gated', { ...base, spec: { ...base.spec!, schedulingGates: [{ name: 'wait' }] } }, false],
  ])('%s → %s', (_, p, want) => expect(isPodToSchedule(p, 'default-scheduler')).toBe(want));
});

describe('withScheduledCondition', () => {
  const now = '2026-01-01T00:00:00Z';
  it('adds, keeps the transition time on message change, and is a no-op when equal', () => {
    const p = pod('p', []);
    const c1 = withScheduledCondition(p, { status: 'False', reason: 'Unschedulable', message: 'm1' }, now);
    expect(c1).toEqual([
      { type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: 'm1', lastTransitionTime: now },
    ]);
    const p2: Pod = { ...p, status: { conditions: c1! } };
    expect(
      withScheduledCondition(p2, { status: 'False', reason: 'Unschedulable', message: 'm1' }, '2026-01-02T00:00:00Z'),
    ).toBeNull();
    const c2 = withScheduledCondition(
      p2,
      { status: 'False', reason: 'Unschedulable', message: 'm2' },
      '2026-01-02T00:00:00Z',
    );
    expect(c2?.[0]?.lastTransitionTime).toBe(now);
    const c3 = withScheduledCondition(p2, { status: 'True' }, '2026-01-03T00:00:00Z');
    expect(c3?.[0]).toMatchObject({ status: 'True', lastTransitionTime: '2026-01-03T00:00:00Z' });
    expect(c3?.[0]?.reason).toBeUndefined();
  });
});

describe('nodeSchedulingChanged', () => {
  it('ignores heartbeats, sees labels, taints, cordons and readiness', () => {
    const a = node('n1');
    const beat = structuredClone(a);
    beat.status!.conditions![0]!.lastHeartbeatTime = '2026-01-01T00:00:10Z';
    expect(nodeSchedulingChanged(a, beat)).toBe(false);
    expect(nodeSchedulingChanged(a, node('n1', { zone: 'a' }))).toBe(true);
    expect(nodeSchedulingChanged(a, node('n1', {}, { ready: false }))).toBe(true);
    expect(nodeSchedulingChanged(a, node('n1', {}, { unschedulable: true }))).toBe(true);
  });
});
