import { describe, expect, it } from 'vitest';
import {
  decideBoundClaim,
  decideBoundVolume,
  decideClaimSide,
  decideNoMatch,
  decideRequestedVolume,
} from './decide.js';
import { pv, pvc } from './fixtures.test-kit.js';

const BOUND = { 'pv.kubernetes.io/bind-completed': 'yes' };

describe('pure decisions', () => {
  it.each([
    ['missing volume', pvc('c', '1Gi', { volumeName: 'v' }), undefined, 'pending'],
    ['unbound, fits', pvc('c', '1Gi', { volumeName: 'v' }), pv('v', '1Gi'), 'bind'],
    ['unbound, too small', pvc('c', '2Gi', { volumeName: 'v' }), pv('v', '1Gi'), 'mismatch'],
    ['pre-bound to it', pvc('c', '1Gi', { volumeName: 'v' }), pv('v', '1Gi', { claim: { name: 'c' } }), 'bind'],
    [
      'pre-bound, even if too small (Kubernetes does not re-check)',
      pvc('c', '5Gi', { volumeName: 'v' }),
      pv('v', '1Gi', { claim: { name: 'c' } }),
      'bind',
    ],
    [
      'claimed by another',
      pvc('c', '1Gi', { volumeName: 'v' }),
      pv('v', '1Gi', { claim: { name: 'other', uid: 'x' } }),
      'claimedByOther',
    ],
  ] as const)('requested volume: %s → %s', (_n, claim, volume, want) => {
    expect(decideRequestedVolume(claim, volume).kind).toBe(want);
  });

  it.each([
    [true, false, 'wait', 'waitForConsumer'],
    [true, true, 'wait', 'provision'],
    [false, false, 'gold', 'provision'],
    [false, false, '', 'failedBinding'],
    [true, true, '', 'failedBinding'],
  ] as const)('no match: delay=%s selectedNode=%s class=%j → %s', (delay, node, cls, want) => {
    expect(decideNoMatch(delay, node, cls).kind).toBe(want);
  });

  it.each([
    ['no volumeName', pvc('c', '1Gi', { annotations: BOUND }), undefined, 'lost'],
    ['volume gone', pvc('c', '1Gi', { volumeName: 'v', annotations: BOUND }), undefined, 'lost'],
    ['volume unbound', pvc('c', '1Gi', { volumeName: 'v', annotations: BOUND }), pv('v', '1Gi'), 'bind'],
    [
      'same uid',
      pvc('c', '1Gi', { volumeName: 'v', annotations: BOUND }),
      pv('v', '1Gi', { claim: { name: 'c', uid: 'uid-c' } }),
      'bind',
    ],
    [
      'other uid',
      pvc('c', '1Gi', { volumeName: 'v', annotations: BOUND }),
      pv('v', '1Gi', { claim: { name: 'c', uid: 'x' } }),
      'lost',
    ],
  ] as const)('bound claim: %s → %s', (_n, claim, volume, want) => {
    expect(decideBoundClaim(claim, volume).kind).toBe(want);
  });

  const BY_CONTROLLER = { 'pv.kubernetes.io/bound-by-controller': 'yes' };
  const ours = pv('u', '1Gi', { phase: 'Bound', claim: { name: 'c', uid: 'uid-c' }, annotations: BY_CONTROLLER });
  const users = pv('p', '1Gi', { phase: 'Bound', claim: { name: 'c', uid: 'uid-c' } });
  it.each([
    ['controller-chosen, still the best match', ours, ours, 'commit'],
    ['controller-chosen, no match any more (e.g. being deleted): as Kubernetes, go on', ours, null, 'commit'],
    ['controller-chosen, a volume pre-bound by the user is the match now', ours, users, 'yield'],
    ['pre-bound by the user: final whatever else appeared', users, pv('q', '1Gi', { claim: { name: 'c' } }), 'commit'],
  ] as const)('claim side of a bind: %s → %s', (_n, chosen, best, want) => {
    expect(decideClaimSide(chosen, best).kind).toBe(want);
  });

  it.each([
    ['claim gone', pv('v', '1Gi'), null, 'release'],
    ['claim unbound', pv('v', '1Gi'), pvc('c', '1Gi'), 'enqueueClaim'],
    ['claim unbound, mode differs', pv('v', '1Gi'), pvc('c', '1Gi', { volumeMode: 'Block' }), 'volumeModeMismatch'],
    ['claim bound here', pv('v', '1Gi'), pvc('c', '1Gi', { volumeName: 'v' }), 'bound'],
    ['claim elsewhere', pv('v', '1Gi'), pvc('c', '1Gi', { volumeName: 'w' }), 'unbind'],
    [
      'claim elsewhere, provisioned Delete',
      pv('v', '1Gi', { policy: 'Delete', annotations: { 'pv.kubernetes.io/provisioned-by': 'x' } }),
      pvc('c', '1Gi', { volumeName: 'w' }),
      'release',
    ],
    [
      'claim elsewhere, provisioned Retain',
      pv('v', '1Gi', { annotations: { 'pv.kubernetes.io/provisioned-by': 'x' } }),
      pvc('c', '1Gi', { volumeName: 'w' }),
      'unbind',
    ],
  ] as const)('bound volume: %s → %s', (_n, volume, claim, want) => {
    expect(decideBoundVolume(volume, claim).kind).toBe(want);
  });
});
