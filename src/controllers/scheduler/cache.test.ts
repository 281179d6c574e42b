import { describe, expect, it } from 'vitest';
import type { Lister } from '../../client/index.js';
import { POD_CLAIM_INDEX, POD_NODE_INDEX, podClaimKeys, podNodeKeys } from '../informers.js';
import { SchedulerCache } from './cache.js';
import { preboundVolume } from './policy.js';
import { claim, pod, volume } from './fixtures.test-kit.js';
import type { KubeObjectLike } from '../../client/index.js';

function lister<T extends KubeObjectLike>(items: T[], indexes: Record<string, (o: T) => string[]> = {}): Lister<T> {
  const key = (o: T): string =>
    o.metadata?.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : (o.metadata?.name ?? '');
  const get = (a: string, b?: string): T | undefined =>
    items.find((o) => key(o) === (b === undefined ? a : `${a}/${b}`));
  return {
    get: get as Lister<T>['get'],
    getByKey: (k) => items.find((o) => key(o) === k),
    list: () => [...items],
    byIndex: (name, value) => items.filter((o) => (indexes[name]?.(o) ?? []).includes(value)),
  };
}

describe('SchedulerCache', () => {
  const podsOnN1 = [pod('running', ['c1'], { nodeName: 'n1' })];
  const pvs = [volume('pv1'), volume('pv2')];
  const make = (): SchedulerCache =>
    new SchedulerCache({
      pods: lister(podsOnN1, { [POD_NODE_INDEX]: podNodeKeys, [POD_CLAIM_INDEX]: podClaimKeys }),
      nodes: lister([]),
      volumes: lister(pvs),
      claims: lister([claim('c1')]),
      classes: lister([]),
      csiNodes: lister([]),
      csiDrivers: lister([]),
      capacities: lister([]),
    });

  it('counts assumed pods on their node and as users of their claims until forgotten', () => {
    const c = make();
    c.assume(pod('new', ['c1']), 'n1', 'binding', 0);
    expect(
      c
        .view()
        .podsOnNode('n1')
        .map((p) => p.metadata?.name),
    ).toEqual(['running', 'new']);
    expect(
      c
        .view()
        .assignedPodsUsingClaim('default', 'c1')
        .map((p) => p.metadata?.name),
    ).toEqual(['running', 'new']);
    expect(c.view().podsOnNode('n2')).toEqual([]);
    c.forget('default/new');
    expect(
      c
        .view()
        .podsOnNode('n1')
        .map((p) => p.metadata?.name),
    ).toEqual(['running']);
  });

  it('shows a pre-bound volume as taken until the informer catches up, and forgets a failed one', () => {
    const c = make();
    c.assumeVolume(preboundVolume(pvs[0]!, claim('c1')));
    expect(c.view().volume('pv1')?.spec?.claimRef?.name).toBe('c1');
    expect(
      c
        .view()
        .volumes()
        .filter((v) => v.spec?.claimRef)
        .map((v) => v.metadata?.name),
    ).toEqual(['pv1']);
    c.observeVolume(pvs[0], 'pv1'); // informer copy still without claimRef: keep the assumption
    expect(c.view().volume('pv1')?.spec?.claimRef).toBeDefined();
    c.forgetVolume('pv1');
    expect(c.view().volume('pv1')?.spec?.claimRef).toBeUndefined();
  });
});
