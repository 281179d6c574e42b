/**
 * The node lifecycle controller's zones against a real API server: NoExecute taints go out one per
 * token of the zone's bucket (kube's --node-eviction-rate 0.1/s, burst 1), and when every zone is
 * down (a single node that stops, or all of them) nothing is tainted NoExecute and nothing evicted.
 * Node readiness is set directly, as a kubelet or the controller would; time is a fake clock, so a
 * taint's timeAdded says when the controller's bucket let it out.
 */
import type { Node, Pod } from 'kubernetes-types/core/v1.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApiServer, type TestApiServer } from '../src/cli/testing.test-kit.js';
import { FakeClock } from '../src/client/fake-clock.test-kit.js';
import type { RestClient } from '../src/client/index.js';
import { runNodeLifecycleController } from '../src/controllers/nodelifecycle/run.js';
import { metaTime } from '../src/util/metatime.js';
import { MetricsRegistry } from '../src/util/metrics.js';
import { readyNode, until } from './scheduler-kit.js';

const T0 = Date.parse('2026-11-24T12:00:00Z');
const UNREACHABLE_NO_EXECUTE = 'node.kubernetes.io/unreachable:NoExecute';
const HOUR = 3_600_000;
const Z1 = 'region1:\x00:zone1';
const Z2 = 'region1:\x00:zone2';

let srv: TestApiServer;
let client: RestClient;
const clock = new FakeClock(T0);
const metrics = new MetricsRegistry();
const stop = new AbortController();
let controller: Promise<void>;

const nodeApi = () => client.resource('Node');
const taintKeys = (n: Node): string[] => (n.spec?.taints ?? []).map((t) => `${t.key}:${t.effect}`).sort();
const noExecuteAdded = async (name: string): Promise<string | undefined> =>
  (await nodeApi().get(name)).spec?.taints?.find((t) => `${t.key}:${t.effect}` === UNREACHABLE_NO_EXECUTE)?.timeAdded ??
  undefined;
const setReady = (name: string, status: 'True' | 'Unknown'): Promise<unknown> =>
  nodeApi().patchStatus(name, 'merge', {
    status: {
      conditions: [
        {
          type: 'Ready',
          status,
          reason: status === 'True' ? 'KubeletReady' : 'NodeStatusUnknown',
          lastHeartbeatTime: metaTime(T0),
        },
      ],
    },
  });
/** The zone pass's own count of a zone's not Ready nodes (kube's node_collector_unhealthy_nodes_in_zone): proof the pass saw a change. */
const unhealthyIn = (zone: string): number | undefined =>
  metrics.gauge('node_collector_unhealthy_nodes_in_zone', '', ['zone']).get({ zone });
/** A node event, so that the zone pass runs at the fake clock's present (besides its own requeue). */
const nudge = (): Promise<unknown> =>
  nodeApi().patch('solo', 'merge', { metadata: { annotations: { nudge: String(clock.now()) } } });
const zoned = (zone: string) => ({ 'topology.kubernetes.io/region': 'region1', 'topology.kubernetes.io/zone': zone });

beforeAll(async () => {
  srv = await startTestApiServer({ controllers: false });
  client = srv.plane.client;
  // Heartbeats are never judged stale here (1 h of fake time): readiness is what the test sets.
  controller = runNodeLifecycleController({
    client,
    signal: stop.signal,
    clock,
    metrics,
    gracePeriodMs: HOUR,
    monitorPeriodMs: HOUR,
  });
});

afterAll(async () => {
  stop.abort();
  await controller;
  await srv?.close();
});

describe('node lifecycle zones', () => {
  it('a single node that stops reporting: NoSchedule taint and pods not Ready, but no NoExecute taint and no eviction (disruption mode); Ready again, untainted', async () => {
    await readyNode(client, 'solo');
    const pod: Pod = await client.resource('Pod').create({
      metadata: { name: 'app', namespace: 'default' },
      spec: { nodeName: 'solo', containers: [{ name: 'c', image: 'busybox' }], tolerations: [] },
    });
    await client
      .resource('Pod')
      .patchStatus(
        'app',
        'merge',
        { status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } },
        { namespace: 'default' },
      );
    await until('solo counted healthy', async () => unhealthyIn('') === 0);
    const registered = await until('RegisteredNode', async () =>
      (
        await client.resource('Event').list({ namespace: 'default', fieldSelector: 'involvedObject.name=solo' })
      ).items.find((e) => e.reason === 'RegisteredNode'),
    );
    expect(registered).toMatchObject({
      type: 'Normal',
      message: 'Registered Node solo in Controller',
      involvedObject: { kind: 'Node', name: 'solo' },
      source: { component: 'node-controller' },
    });

    await setReady('solo', 'Unknown');
    await until('the zone pass saw solo down', async () => unhealthyIn('') === 1);
    await until('solo NoSchedule-tainted', async () =>
      taintKeys(await nodeApi().get('solo')).includes('node.kubernetes.io/unreachable:NoSchedule'),
    );
    await until(
      'app not Ready',
      async () =>
        (await client.resource('Pod').get('app', { namespace: 'default' })).status?.conditions?.find(
          (c) => c.type === 'Ready',
        )?.status === 'False',
    );
    expect(taintKeys(await nodeApi().get('solo'))).toEqual(['node.kubernetes.io/unreachable:NoSchedule']);
    // No toleration at all: a NoExecute taint would have evicted it at once.
    expect((await client.resource('Pod').get('app', { namespace: 'default' })).metadata?.uid).toBe(pod.metadata?.uid);
    expect(
      (await client.resource('Pod').get('app', { namespace: 'default' })).metadata?.deletionTimestamp,
    ).toBeUndefined();

    await setReady('solo', 'True');
    await until('solo untainted', async () => taintKeys(await nodeApi().get('solo')).length === 0);
    await until('solo counted healthy again', async () => unhealthyIn('') === 0);
  });

  it('zones: one node down in a healthy zone is tainted at once, the next one a token (10 s) later; a whole zone down among healthy ones is tainted too', async () => {
    for (const n of ['z1a', 'z1b', 'z1c']) await readyNode(client, n, zoned('zone1'));
    await readyNode(client, 'z2a', zoned('zone2'));
    await until('zones counted', async () => unhealthyIn(Z1) === 0 && unhealthyIn(Z2) === 0);

    await setReady('z1a', 'Unknown');
    expect(await until('z1a tainted NoExecute', () => noExecuteAdded('z1a'))).toBe(metaTime(clock.now()));

    await setReady('z1b', 'Unknown');
    await until('the zone pass saw z1b down', async () => unhealthyIn(Z1) === 2);
    expect(await noExecuteAdded('z1b')).toBeUndefined(); // its zone's bucket is empty until 10 s after z1a's taint
    await clock.advance(10_000);
    await nudge();
    expect(await until('z1b tainted NoExecute', () => noExecuteAdded('z1b'))).toBe(metaTime(T0 + 10_000));

    // All of zone1 down while zone2 is healthy: zone1 is FullDisruption, tainted at the normal rate.
    await setReady('z1c', 'Unknown');
    await until('the zone pass saw zone1 down', async () => unhealthyIn(Z1) === 3);
    await clock.advance(10_000);
    await nudge();
    expect(await until('z1c tainted NoExecute', () => noExecuteAdded('z1c'))).toBe(metaTime(T0 + 20_000));
  });

  it('every zone down: disruption mode lifts the NoExecute taints everywhere; some node back: tainting resumes a token later', async () => {
    await setReady('solo', 'Unknown');
    await setReady('z2a', 'Unknown');
    await until('NoExecute taints lifted', async () => {
      for (const n of ['z1a', 'z1b', 'z1c']) if ((await noExecuteAdded(n)) !== undefined) return false;
      return true;
    });
    // Still down, but not tainted: the rate is 0 while every zone is down. A node joining zone2, as
    // down as the rest, makes a pass run a minute later, when every bucket would have had a token.
    await clock.advance(60_000);
    await nodeApi().create({ metadata: { name: 'z2b', labels: zoned('zone2') } });
    await setReady('z2b', 'Unknown');
    await until('the zone pass saw z2b', async () => unhealthyIn(Z2) === 2);
    for (const n of ['z1a', 'z1b', 'z1c']) expect(await noExecuteAdded(n)).toBeUndefined();

    // zone2 back: leaving disruption mode; zone1's bucket starts drained, so its first taint waits a token.
    const back = clock.now();
    await setReady('z2a', 'True');
    await until('the zone pass saw z2a back', async () => unhealthyIn(Z2) === 1);
    for (const n of ['z1a', 'z1b', 'z1c']) expect(await noExecuteAdded(n)).toBeUndefined();
    await clock.advance(10_000);
    await nudge();
    const tainted = await until('one zone1 node tainted', async () => {
      const added = await Promise.all(['z1a', 'z1b', 'z1c'].map(noExecuteAdded));
      const some = added.filter((a): a is string => a !== undefined);
      return some.length ? some : undefined;
    });
    expect(tainted).toEqual([metaTime(back + 10_000)]);

    await nodeApi().delete('z2b');
    const removing = await until('RemovingNode', async () =>
      (
        await client.resource('Event').list({ namespace: 'default', fieldSelector: 'involvedObject.name=z2b' })
      ).items.find((e) => e.reason === 'RemovingNode'),
    );
    expect(removing.message).toBe('Removing Node z2b from Controller');
  });

  it('kubectl cordon / uncordon: the unschedulable NoSchedule taint comes and goes (not rate-limited)', async () => {
    await readyNode(client, 'cordoned');
    await nodeApi().patch('cordoned', 'merge', { spec: { unschedulable: true } });
    await until('unschedulable taint', async () =>
      taintKeys(await nodeApi().get('cordoned')).includes('node.kubernetes.io/unschedulable:NoSchedule'),
    );
    await nodeApi().patch('cordoned', 'merge', { spec: { unschedulable: null } });
    await until('unschedulable taint gone', async () => taintKeys(await nodeApi().get('cordoned')).length === 0);
  });
});
