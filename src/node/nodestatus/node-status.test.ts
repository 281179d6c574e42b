import type { Lease } from 'kubernetes-types/coordination/v1.js';
import type { Node } from 'kubernetes-types/core/v1.js';
import { describe, expect, it } from 'vitest';
import { FakeClock, flushMicrotasks } from '../../client/fake-clock.test-kit.js';
import type { RestClient } from '../../client/rest.js';
import { ConflictError, UnavailableError } from '../../util/errors.js';
import type { Logger } from '../../util/log.js';
import type { HostInfo } from './host.js';
import { startNodeStatus } from './node-status.js';

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => quiet };
const host: HostInfo = {
  hostname: 'n1',
  os: 'linux',
  arch: 'amd64',
  kernelVersion: '6.1',
  osImage: 'Linux',
  internalIP: undefined,
  cpus: 2,
  memoryBytes: 1 << 30,
  machineID: 'm',
  bootID: 'b',
};

/** An API with a Node and its Lease, counting writes; `failLease` failures of the next lease updates. */
function fakeApi() {
  let node: Node = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1', labels: {} } };
  let lease: Lease | undefined;
  const counts = { statusWrites: 0, leaseUpdates: 0, leaseReads: 0 };
  let failLease = 0;
  let conflictLease = false;
  const resources: Record<string, unknown> = {
    Node: {
      get: async () => node,
      patch: async () => node,
      patchStatus: async (_name: string, _type: string, patch: { status: Node['status'] }) => {
        counts.statusWrites++;
        node = { ...node, status: patch.status };
        return node;
      },
    },
    Lease: {
      get: async () => {
        counts.leaseReads++;
        return lease;
      },
      create: async (l: Lease) => (lease = l),
      update: async (l: Lease) => {
        counts.leaseUpdates++;
        if (conflictLease) {
          conflictLease = false;
          throw new ConflictError('the object has been modified');
        }
        if (failLease > 0) {
          failLease--;
          throw new UnavailableError('api down');
        }
        return (lease = l);
      },
    },
  };
  const client = {
    resource: (k: string) => resources[k],
    http: { json: async () => ({ gitVersion: 'v1.31.0' }) },
  } as unknown as RestClient;
  return {
    client,
    node: () => node,
    setNode: (n: Node) => (node = n),
    counts,
    failNextLeaseUpdates: (n: number) => (failLease = n),
    conflictNextLeaseUpdate: () => (conflictLease = true),
  };
}

describe('node status heartbeat', () => {
  it('renews the lease every period; a failed renewal is retried when its backoff expires, not a period later', async () => {
    const api = fakeApi();
    const clock = new FakeClock();
    const stop = new AbortController();
    const ns = await startNodeStatus(
      { client: api.client, nodeName: 'n1', host, clock, log: quiet, leaseRenewMs: 10_000, statusPeriodMs: 60_000 },
      stop.signal,
    );
    await flushMicrotasks();
    expect(api.counts).toEqual({ statusWrites: 1, leaseUpdates: 0, leaseReads: 1 });
    await clock.advance(10_000);
    expect(api.counts.leaseUpdates).toBe(1);
    expect(api.counts.leaseReads).toBe(1); // renewed from the Lease as last written, not read again
    api.failNextLeaseUpdates(2);
    await clock.advance(10_000);
    expect(api.counts.leaseUpdates).toBe(2);
    await clock.advance(499);
    expect(api.counts.leaseUpdates).toBe(2);
    await clock.advance(1);
    expect(api.counts.leaseUpdates).toBe(3);
    await clock.advance(1_000);
    expect(api.counts.leaseUpdates).toBe(4); // succeeded: the next renewal is a period later
    expect(api.counts.leaseReads).toBe(3); // each retry after a failed update read the Lease again
    await clock.advance(9_999);
    expect(api.counts.leaseUpdates).toBe(4);
    await clock.advance(1);
    expect(api.counts.leaseUpdates).toBe(5);
    expect(api.counts.statusWrites).toBe(1);
    await clock.advance(60_000);
    expect(api.counts.statusWrites).toBe(2);
    await ns.stop();
    expect(clock.pending()).toBe(0);
  });

  it('a renewal whose cached Lease is stale (conflict) reads the Lease again and writes in the same round', async () => {
    const api = fakeApi();
    const clock = new FakeClock();
    const stop = new AbortController();
    const ns = await startNodeStatus(
      { client: api.client, nodeName: 'n1', host, clock, log: quiet, leaseRenewMs: 10_000, statusPeriodMs: 60_000 },
      stop.signal,
    );
    await flushMicrotasks();
    api.conflictNextLeaseUpdate();
    await clock.advance(10_000);
    expect(api.counts).toMatchObject({ leaseUpdates: 2, leaseReads: 2 });
    await clock.advance(10_000);
    expect(api.counts).toMatchObject({ leaseUpdates: 3, leaseReads: 2 });
    await ns.stop();
  });

  it('reads the Node back every check period and reports at once when the node controller turned Ready Unknown', async () => {
    const api = fakeApi();
    const clock = new FakeClock();
    const stop = new AbortController();
    const ns = await startNodeStatus(
      {
        client: api.client,
        nodeName: 'n1',
        host,
        clock,
        log: quiet,
        leaseRenewMs: 10_000,
        statusPeriodMs: 60_000,
        statusCheckMs: 2_000,
      },
      stop.signal,
    );
    await flushMicrotasks();
    expect(api.counts.statusWrites).toBe(1);
    await clock.advance(4_000);
    expect(api.counts.statusWrites).toBe(1); // Ready True as written: nothing to report before the report period
    const n = api.node();
    api.setNode({
      ...n,
      status: {
        ...n.status,
        conditions: n.status?.conditions?.map((c) =>
          c.type === 'Ready' ? { ...c, status: 'Unknown', reason: 'NodeStatusUnknown' } : c,
        ),
      },
    });
    await clock.advance(2_000);
    expect(api.counts.statusWrites).toBe(2);
    expect(api.node().status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'True' });
    await ns.stop();
  });
});
