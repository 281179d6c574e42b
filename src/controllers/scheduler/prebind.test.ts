import { describe, expect, it } from 'vitest';
import { volumeBindingState } from './prebind.js';
import { claim, pod, viewOf, volume, type World } from './fixtures.test-kit.js';

describe('volumeBindingState', () => {
  it.each<{ name: string; world: World; versions?: Record<string, number>; want: string }>([
    {
      name: 'all claims fully bound',
      world: { claims: [claim('c', { bound: true, volumeName: 'pv' })] },
      want: 'bound',
    },
    { name: 'provisioning for this node', world: { claims: [claim('c', { selectedNode: 'n1' })] }, want: 'waiting' },
    {
      name: 'static PV pre-bound, PV controller not done',
      world: { claims: [claim('c')], volumes: [volume('pv', { claim: 'c' })] },
      want: 'waiting',
    },
    {
      name: 'volumeName set, bind not completed',
      world: { claims: [claim('c', { volumeName: 'pv' })] },
      want: 'waiting',
    },
    { name: 'selected-node cleared (reschedule asked)', world: { claims: [claim('c')] }, want: 'undone' },
    {
      name: 'informer older than our own write',
      world: { claims: [claim('c')] },
      versions: { 'default/c': 5 },
      want: 'waiting',
    },
    { name: 'selected node moved elsewhere', world: { claims: [claim('c', { selectedNode: 'n2' })] }, want: 'undone' },
    { name: 'claim deleted', world: {}, want: 'undone' },
  ])('$name → $want', ({ world, versions, want }) => {
    expect(volumeBindingState(pod('p', ['c']), 'n1', viewOf(world), versions).kind).toBe(want);
  });
});
