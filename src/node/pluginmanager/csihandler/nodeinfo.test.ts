import { describe, it, expect } from 'vitest';
import type { Node } from 'kubernetes-types/core/v1.js';
import type { CSINode } from 'kubernetes-types/storage/v1.js';
import { RestClient } from '../../../client/rest.js';
import { InternalError } from '../../../util/errors.js';
import type { Logger } from '../../../util/log.js';
import { newObjectBatcher } from './batcher.js';
import { ANN_CSI_NODE_ID } from './node-updates.js';
import { newNodeInfoManager } from './nodeinfo.js';

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => quiet };
const signal = new AbortController().signal;
// Never dialled in these tests: every read and write goes through the in-memory batchers.
const client = new RestClient({ server: 'http://127.0.0.1:9', token: 't' });

/** An object in memory; its first `failWrites` writes fail with a 500 (all of them with `true`). */
function memory<T>(initial: T | undefined, o: { failWrites?: boolean | number } = {}) {
  let obj = initial;
  let failures = 0;
  return {
    get: () => obj,
    writeFailures: () => failures,
    batcher: newObjectBatcher<T>({
      get: async () => (obj === undefined ? undefined : structuredClone(obj)),
      write: async (next) => {
        if (o.failWrites === true || failures < Number(o.failWrites ?? 0)) {
          failures++;
          throw new InternalError('etcd is down');
        }
        obj = structuredClone(next);
        return next;
      },
    }),
  };
}

const node = (): Node => ({
  metadata: {
    name: 'n1',
    uid: 'u1',
    labels: { 'kubernetes.io/hostname': 'n1' },
    annotations: { [ANN_CSI_NODE_ID]: '{"other.csi":"o"}' },
  },
});
const info = { driver: 'a.csi', nodeId: 'id-a', topology: { 'topology.a/zone': 'z1' }, maxVolumesPerNode: 0 };

describe('node info manager', () => {
  it('installs: annotation merged, topology label added, CSINode created with an owner', async () => {
    const n = memory<Node>(node());
    const c = memory<CSINode>(undefined);
    const m = newNodeInfoManager({
      client,
      nodeName: 'n1',
      nodeBatcher: n.batcher,
      csiNodeBatcher: c.batcher,
      log: quiet,
    });
    await m.installDriver(info, signal);
    expect(JSON.parse(n.get()?.metadata?.annotations?.[ANN_CSI_NODE_ID] ?? '')).toEqual({
      'other.csi': 'o',
      'a.csi': 'id-a',
    });
    expect(n.get()?.metadata?.labels).toEqual({ 'kubernetes.io/hostname': 'n1', 'topology.a/zone': 'z1' });
    expect(c.get()?.metadata?.ownerReferences?.[0]).toMatchObject({ kind: 'Node', name: 'n1', uid: 'u1' });
    expect(c.get()?.spec.drivers).toEqual([{ name: 'a.csi', nodeID: 'id-a', topologyKeys: ['topology.a/zone'] }]);
    expect(await m.installedDrivers(signal)).toEqual(['a.csi', 'other.csi']);
  });

  it('a CSINode write that keeps failing is tried 4 times (updateBackoff: 10, 50, 250 ms), then the Node changes are undone', async () => {
    const n = memory<Node>(node());
    const c = memory<CSINode>(undefined, { failWrites: true });
    const slept: number[] = [];
    const clock = { now: () => 0, sleep: async (ms: number) => void slept.push(ms) };
    const m = newNodeInfoManager({
      client,
      nodeName: 'n1',
      nodeBatcher: n.batcher,
      csiNodeBatcher: c.batcher,
      log: quiet,
      clock,
    });
    await expect(m.installDriver(info, signal)).rejects.toThrow('etcd is down');
    expect(c.writeFailures()).toBe(4);
    expect(slept).toEqual([10, 50, 250]);
    expect(n.get()?.metadata?.annotations).toEqual(node().metadata?.annotations);
    expect(n.get()?.metadata?.labels).toEqual(node().metadata?.labels);
  });

  it('a CSINode write failing transiently is retried and the driver installed', async () => {
    const n = memory<Node>(node());
    const c = memory<CSINode>(undefined, { failWrites: 2 });
    const clock = { now: () => 0, sleep: async () => undefined };
    const m = newNodeInfoManager({
      client,
      nodeName: 'n1',
      nodeBatcher: n.batcher,
      csiNodeBatcher: c.batcher,
      log: quiet,
      clock,
    });
    await m.installDriver(info, signal);
    expect(c.get()?.spec.drivers?.map((x) => x.name)).toEqual(['a.csi']);
    expect(JSON.parse(n.get()?.metadata?.annotations?.[ANN_CSI_NODE_ID] ?? '')).toEqual({
      'other.csi': 'o',
      'a.csi': 'id-a',
    });
  });

  it('refuses when the Node is missing, writing nothing', async () => {
    const n = memory<Node>(undefined);
    const c = memory<CSINode>(undefined);
    const m = newNodeInfoManager({
      client,
      nodeName: 'n1',
      nodeBatcher: n.batcher,
      csiNodeBatcher: c.batcher,
      log: quiet,
    });
    await expect(m.installDriver(info, signal)).rejects.toThrow(/does not exist/);
    expect(c.get()).toBeUndefined();
  });

  it('uninstalls: CSINode entry and annotation key go, the annotation with its last key', async () => {
    const n = memory<Node>(node());
    const c = memory<CSINode>(undefined);
    const m = newNodeInfoManager({
      client,
      nodeName: 'n1',
      nodeBatcher: n.batcher,
      csiNodeBatcher: c.batcher,
      log: quiet,
    });
    await m.installDriver(info, signal);
    await m.uninstallDriver('a.csi', signal);
    expect(c.get()?.spec.drivers).toEqual([]);
    expect(JSON.parse(n.get()?.metadata?.annotations?.[ANN_CSI_NODE_ID] ?? '')).toEqual({ 'other.csi': 'o' });
    await m.uninstallDriver('other.csi', signal);
    expect(n.get()?.metadata?.annotations?.[ANN_CSI_NODE_ID]).toBeUndefined();
  });

  it('replaces a changed entry by removing it first (CSINode entries are immutable)', async () => {
    const n = memory<Node>(node());
    const writes: CSINode[] = [];
    let obj: CSINode | undefined = {
      metadata: { name: 'n1' },
      spec: { drivers: [{ name: 'a.csi', nodeID: 'old', topologyKeys: ['topology.a/zone'] }] },
    };
    const csiNodeBatcher = newObjectBatcher<CSINode>({
      get: async () => structuredClone(obj),
      write: async (next) => {
        writes.push(structuredClone(next));
        obj = next;
        return next;
      },
    });
    const m = newNodeInfoManager({ client, nodeName: 'n1', nodeBatcher: n.batcher, csiNodeBatcher, log: quiet });
    await m.installDriver(info, signal);
    expect(writes.map((w) => w.spec.drivers?.map((d) => d.nodeID))).toEqual([[], ['id-a']]);
  });
});
