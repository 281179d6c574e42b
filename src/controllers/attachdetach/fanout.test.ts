import type { Node, PersistentVolume, PersistentVolumeClaim, Pod } from 'kubernetes-types/core/v1.js';
import type { VolumeAttachment } from 'kubernetes-types/storage/v1.js';
import { describe, expect, it } from 'vitest';
import { ObjectCache, type IndexFunc, type Informer, type KubeObjectLike } from '../../client/index.js';
import {
  POD_CLAIM_INDEX,
  POD_NODE_INDEX,
  VA_NODE_INDEX,
  VA_VOLUME_INDEX,
  attachmentNodeKeys,
  attachmentVolumeKeys,
  podClaimKeys,
  podNodeKeys,
} from '../informers.js';
import { newKeyFanout } from './fanout.js';
import { nodeKey, pairKey } from './keys.js';

/** A synced informer over fixed objects: only its cache is read. */
function informerOf<T extends KubeObjectLike>(objs: T[], indexes: Record<string, IndexFunc<T>> = {}): Informer<T> {
  const cache = new ObjectCache<T>();
  for (const [n, f] of Object.entries(indexes)) cache.addIndexer(n, f);
  for (const o of objs) cache.upsert(o);
  return {
    lister: cache,
    byIndex: (n, v) => cache.byIndex(n, v),
    addEventHandler: () => undefined,
    addIndexer: (n, f) => cache.addIndexer(n, f),
    hasSynced: () => true,
    waitForSync: () => Promise.resolve(),
    lastSyncResourceVersion: () => '',
    run: () => Promise.resolve(),
  };
}

const pod = (name: string, node: string | undefined, claims: string[]): Pod => ({
  metadata: { name, namespace: 'ns' },
  spec: {
    ...(node ? { nodeName: node } : {}),
    containers: [],
    volumes: claims.map((c) => ({ name: c, persistentVolumeClaim: { claimName: c } })),
  },
});
const claim = (name: string, pv: string): PersistentVolumeClaim => ({
  metadata: { name, namespace: 'ns' },
  spec: { volumeName: pv },
});
const volume = (name: string, claimName: string): PersistentVolume => ({
  metadata: { name },
  spec: { claimRef: { namespace: 'ns', name: claimName } },
});
const va = (pv: string, node: string): VolumeAttachment => ({
  metadata: { name: `va-${pv}-${node}` },
  spec: { attacher: 'd', nodeName: node, source: { persistentVolumeName: pv } },
});

function setup() {
  const fan = newKeyFanout({
    pods: informerOf(
      [
        pod('a', 'n1', ['c1']),
        pod('b', 'n2', ['c1']),
        pod('gone-claim', 'n3', ['lost']),
        pod('pending', undefined, ['c2']),
      ],
      { [POD_CLAIM_INDEX]: podClaimKeys, [POD_NODE_INDEX]: podNodeKeys },
    ),
    pvcs: informerOf([claim('c1', 'pv1'), claim('c2', 'pv2')]),
    pvs: informerOf([volume('pv1', 'c1'), volume('pv2', 'c2')]),
    attachments: informerOf([va('pv1', 'n1'), va('pv9', 'n3')], {
      [VA_VOLUME_INDEX]: attachmentVolumeKeys,
      [VA_NODE_INDEX]: attachmentNodeKeys,
    }),
    nodes: informerOf<Node>([{ metadata: { name: 'n1' } }, { metadata: { name: 'n2' } }]),
  });
  const keys = new Set<string>();
  return { fan, keys, q: { add: (k: string) => void keys.add(k), addAfter: (k: string) => void keys.add(k) } };
}

describe('attach/detach key fan-out', () => {
  it('a scheduled pod wakes the pairs of its volumes on its node only', () => {
    const { fan, keys, q } = setup();
    fan.pod(q, pod('a', 'n1', ['c1']));
    expect([...keys]).toEqual([pairKey('pv1', 'n1')]);
  });

  it('an unscheduled pod wakes nothing', () => {
    const { fan, keys, q } = setup();
    fan.pod(q, pod('pending', undefined, ['c2']));
    expect(keys.size).toBe(0);
  });

  it('a pod whose claim is gone wakes its whole node (the attachment there may have to go)', () => {
    const { fan, keys, q } = setup();
    fan.pod(q, pod('gone-claim', 'n3', ['lost']));
    expect([...keys].sort()).toEqual([nodeKey('n3'), pairKey('pv9', 'n3')].sort());
  });

  it('a volume wakes its pair on every node that has it attached or a pod wanting it', () => {
    const { fan, keys, q } = setup();
    fan.volume(q, 'pv1');
    expect([...keys].sort()).toEqual([pairKey('pv1', 'n1'), pairKey('pv1', 'n2')].sort());
  });

  it('a node wakes its status and every pair on it', () => {
    const { fan, keys, q } = setup();
    fan.node(q, 'n1');
    expect([...keys].sort()).toEqual([nodeKey('n1'), pairKey('pv1', 'n1')].sort());
  });

  it("a node's attached volumes wake their pairs on every node (a pod elsewhere may wait for them)", () => {
    const { fan, keys, q } = setup();
    fan.volumesOf(q, 'n1');
    expect([...keys].sort()).toEqual([pairKey('pv1', 'n1'), pairKey('pv1', 'n2')].sort());
  });

  it('a resync wakes every node and every pair', () => {
    const { fan, keys, q } = setup();
    fan.all(q);
    expect([...keys].sort()).toEqual(
      [
        nodeKey('n1'),
        nodeKey('n2'),
        nodeKey('n3'),
        pairKey('pv1', 'n1'),
        pairKey('pv1', 'n2'),
        pairKey('pv9', 'n3'),
      ].sort(),
    );
  });
});
