import { describe, expect, it } from 'vitest';
import type { Node } from 'kubernetes-types/core/v1.js';
import type { Lister, ResourceClient } from '../../client/index.js';
import { TAINT_NOT_READY } from '../../kube/names.js';
import { ConflictError, NotFoundError } from '../../util/errors.js';
import { MetricsRegistry } from '../../util/metrics.js';
import { newZonePass } from './zonepass.js';
import { DEFAULT_EVICTION_LIMITS } from './zones.js';

const node = (name: string, ready: 'True' | 'False', rv: string): Node => ({
  metadata: { name, uid: `uid-${name}`, resourceVersion: rv, labels: { 'topology.kubernetes.io/zone': 'z1' } },
  status: { conditions: [{ type: 'Ready', status: ready }] },
});

/** A zone pass over `nodes` whose writes go through `update` (and re-reads through `get`). */
function pass(nodes: Node[], api: { update: (n: Node) => Promise<Node>; get: (name: string) => Promise<Node> }) {
  const lister = {
    get: (name: string) => nodes.find((n) => n.metadata?.name === name),
    list: () => [...nodes],
  } as unknown as Lister<Node>;
  const nodeApi = api as unknown as ResourceClient<Node>;
  const clock = { now: () => 1_000_000, sleep: async () => undefined };
  return newZonePass({
    nodes: lister,
    nodeApi,
    clock,
    limits: DEFAULT_EVICTION_LIMITS,
    metrics: new MetricsRegistry(),
    recorder: { event: () => undefined },
    onLeaveDisruption: () => undefined,
  });
}

const noExecuteKeys = (n: Node | undefined): string[] =>
  (n?.spec?.taints ?? []).filter((t) => t.effect === 'NoExecute').map((t) => t.key);

describe('zone pass: the NoExecute taint write (SwapNodeControllerTaint)', () => {
  it('a conflicting write is redone on the node read again, and the taint lands', async () => {
    const down = node('b', 'False', '5');
    const writes: Node[] = [];
    let gets = 0;
    const run = pass([node('a', 'True', '4'), down], {
      update: async (n) => {
        writes.push(n);
        if (writes.length === 1) throw new ConflictError('the object has been modified');
        return { ...n, metadata: { ...n.metadata, resourceVersion: '7' } };
      },
      get: async () => {
        gets++;
        return { ...down, metadata: { ...down.metadata, resourceVersion: '6' } };
      },
    });
    await run();
    expect(gets).toBe(1);
    expect(writes.map((w) => w.metadata?.resourceVersion)).toEqual(['5', '6']);
    expect(noExecuteKeys(writes[1])).toEqual([TAINT_NOT_READY]);
  });

  it('a node deleted under the write is left alone; a write refused otherwise fails the pass', async () => {
    const gone = pass([node('a', 'True', '4'), node('b', 'False', '5')], {
      update: async () => {
        throw new NotFoundError('nodes "b" not found');
      },
      get: async () => {
        throw new Error('not read');
      },
    });
    await expect(gone()).resolves.toBeDefined();
    const refused = pass([node('a', 'True', '4'), node('b', 'False', '5')], {
      update: async () => {
        throw new ConflictError('the object has been modified');
      },
      get: async (name) => node(name, 'False', '6'),
    });
    await expect(refused()).rejects.toThrow('the object has been modified');
  });
});
